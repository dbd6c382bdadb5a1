import { systemClock, type Clock, type TimerHandle } from '../../core/index.js';
import { isRuntimeError } from '../../core/index.js';
import type { EventOf, RuntimeEvent } from '../../core/index.js';
import { interruptedNoticeIndex, type DeliveryStore } from '../../ledger/index.js';
import type { Runtime } from '../../runtime/index.js';
import { deliverBlock, type BlockDeliveryContext } from './deliver-block.js';
import { createSecretScrubber } from './secret-scrubber.js';
import {
  defaultFailureNotice,
  defaultInterruptedNotice,
  type ReplyTarget,
  type TargetResolver,
} from './reply-target.js';

/** Options of `startReplyDelivery`. */
export interface ReplyDeliveryOptions {
  readonly runtime: Runtime;
  /** The ledger the runtime was created with (deliveries are recorded with the consumer's cursor). */
  readonly ledger: DeliveryStore;
  /** The durable consumer's name: it resumes where it stopped, across restarts. */
  readonly consumer: string;
  /** Where a session's replies go; undefined for sessions this adapter does not serve. */
  readonly targetFor: TargetResolver;
  /** The text posted when a run crashed mid-reply. @default defaultInterruptedNotice */
  readonly interruptedNotice?: string;
  /** The text posted when a run failed or timed out; null posts nothing. @default defaultFailureNotice */
  readonly failureNotice?: string | null;
  /** Typing indicator repeat (ms) while a run streams. @default 4000 */
  readonly typingEveryMs?: number;
  readonly clock?: Clock;
  /** Background failures (a platform call that threw outside a delivery), secrets masked. @default console.error */
  readonly onError?: (error: unknown) => void;
  /**
   * The secrets to mask (the bot token) in what the loop reports: errors handed to `onError` and the reasons of
   * `delivery.in_doubt` events. Read at each use. A `bot<id>:<secret>` URL segment is masked in any case.
   */
  readonly secrets?: () => Iterable<string>;
}

/** A running delivery loop. */
export interface ReplyDelivery {
  /** Stop after the event in hand; resolves once the loop ended (its position stored). */
  stop(): Promise<void>;
  /** Resolves when the loop ended (stopped, or the runtime closed). */
  readonly done: Promise<void>;
}

/** The event types the loop reads. */
const deliveryEventTypes = ['run.started', 'assistant.block', 'run.ended'] as const;
/** A run started longer ago than this is history being replayed: no typing indicator for it. */
const liveWindowMs = 30_000;

/** What the loop keeps while it runs: the block context and each run's typing timer. */
interface LoopState extends BlockDeliveryContext {
  readonly options: ReplyDeliveryOptions;
  readonly typing: Map<string, TimerHandle>;
  /** Background failures, scrubbed of secrets. */
  readonly onError: (error: unknown) => void;
}

/** Keep the typing indicator up for a run until it ends (Telegram shows one for about 5 s). */
function startTyping(state: LoopState, runId: string, target: ReplyTarget): void {
  const { clock } = state;
  const every = state.options.typingEveryMs ?? 4000;
  const show = (): void => {
    target.typing?.().catch(state.onError);
    state.typing.set(runId, clock.setTimeout(show, every));
  };
  show();
}

function stopTyping(state: LoopState, runId: string): void {
  const handle = state.typing.get(runId);
  if (handle !== undefined) state.clock.clearTimeout(handle);
  state.typing.delete(runId);
}

/** The notice a run's end calls for: crashed mid-reply, or failed (the chat is not left waiting in silence). */
function noticeFor(options: ReplyDeliveryOptions, event: EventOf<'run.ended'>): string | undefined {
  if (event.status === 'crashed') return options.interruptedNotice ?? defaultInterruptedNotice;
  if (event.status === 'failed' || event.status === 'timeout') {
    return options.failureNotice === undefined ? defaultFailureNotice : (options.failureNotice ?? undefined);
  }
  return undefined;
}

/** A run ended: stop typing; a crashed or failed run gets its notice (once, like a block). */
async function runEnded(state: LoopState, event: EventOf<'run.ended'>, target: ReplyTarget): Promise<void> {
  const runId = event.runId as string;
  stopTyping(state, runId);
  state.streams.delete(runId);
  const text = noticeFor(state.options, event);
  if (text === undefined) return;
  const notice = { sessionKey: event.sessionKey, runId, text, cursor: event.cursor, target };
  await deliverBlock(state, { ...notice, blockIndex: interruptedNoticeIndex });
}

/** Handle one event of the stream. */
async function handle(state: LoopState, event: RuntimeEvent): Promise<void> {
  const target = state.options.targetFor(event.sessionKey);
  if (target === undefined || event.runId === undefined) return;
  const { runId } = event;
  if (event.type === 'run.started') {
    if (target.typing !== undefined && state.clock.now() - event.at < liveWindowMs)
      startTyping(state, runId, target);
  } else if (event.type === 'assistant.block') {
    const block = { sessionKey: event.sessionKey, runId, blockIndex: event.index, text: event.text };
    await deliverBlock(state, { ...block, cursor: event.cursor, target });
  } else if (event.type === 'run.ended') {
    await runEnded(state, event, target);
  }
}

/**
 * Deliver every run's reply blocks to the chat platform through a durable consumer, exactly once: blocks already
 * delivered are never sent again, a send in flight at a crash is resolved through the platform or recorded in
 * doubt (a `delivery.in_doubt` event), and a run that crashed mid-reply gets a short notice.
 */
export function startReplyDelivery(options: ReplyDeliveryOptions): ReplyDelivery {
  const controller = new AbortController();
  const clock = options.clock ?? systemClock;
  const scrubber = createSecretScrubber(options.secrets ?? (() => []));
  const onError = scrubber.wrap(
    options.onError ?? ((error: unknown) => console.error('agentlanes delivery:', error)),
  );
  const state: LoopState = {
    options,
    onError,
    scrub: scrubber.text,
    ledger: options.ledger,
    consumer: options.consumer,
    clock,
    streams: new Map(),
    typing: new Map(),
    reportInDoubt: (intent, reason) =>
      options.runtime.session(intent.sessionKey).reportDeliveryInDoubt({
        consumer: intent.consumer,
        runId: intent.runId,
        blockIndex: intent.blockIndex,
        reason,
      }),
  };
  const run = async (): Promise<void> => {
    const events = options.runtime.events({
      consumer: options.consumer,
      types: [...deliveryEventTypes],
      signal: controller.signal,
    });
    for await (const event of events) {
      try {
        await handle(state, event);
      } catch (error) {
        if (isRuntimeError(error, 'runtime_closed')) break;
        onError(error);
      }
    }
  };
  const done = run()
    .catch((error: unknown) => {
      if (!isRuntimeError(error, 'runtime_closed')) onError(error);
    })
    .finally(() => {
      for (const runId of [...state.typing.keys()]) stopTyping(state, runId);
    });
  return {
    done,
    stop: () => {
      controller.abort();
      return done;
    },
  };
}
