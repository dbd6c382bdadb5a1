import { diag, trace, type Tracer } from '@opentelemetry/api';
import { z } from 'zod';
import { RuntimeError } from '../core/index.js';
import type { EventOf, EventType, RuntimeEvent } from '../core/index.js';
import type { Runtime } from '../runtime/index.js';
import { RunSpans } from './run-spans.js';

/** How `traceRuntime` traces. */
export interface TraceRuntimeOptions {
  /** Where spans go. @default trace.getTracer('agentlanes') (a no-op until the application installs an SDK) */
  readonly tracer?: Tracer;
  /**
   * Put message text, model output and tool arguments and results on spans (`gen_ai.input.messages`,
   * `gen_ai.output.messages`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). They are what the run's
   * events hold: auth-profile secrets are scrubbed from them, but what users write is there. @default false
   */
  readonly recordContent?: boolean;
  /** The agent's name: run spans are `invoke_agent {agentName}`. @default 'agentlanes' */
  readonly agentName?: string;
  /**
   * Read the events as this durable consumer (`runtime.events({ consumer })`): in a cluster, where every worker's
   * `runtime.events()` carries every worker's events, one worker at a time traces the whole cluster (another takes
   * over if it stops), so each run is traced once, its spans in one trace even when its session moved to another
   * worker; and after a restart tracing goes on from where it stopped. @default none (events from now on)
   */
  readonly consumer?: string;
  /** Told of a failure while tracing (the bot goes on). @default OpenTelemetry's `diag.error` */
  readonly onError?: (error: unknown) => void;
}

const optionsSchema = z
  .object({
    tracer: z
      .custom<Tracer>(
        (value) =>
          typeof value === 'object' &&
          value !== null &&
          typeof (value as Partial<Tracer>).startSpan === 'function',
        'a tracer has startSpan()',
      )
      .optional(),
    recordContent: z.boolean().default(false),
    agentName: z.string().min(1).max(200).default('agentlanes'),
    consumer: z.string().min(1).max(200).optional(),
    onError: z.custom<(error: unknown) => void>((value) => typeof value === 'function').optional(),
  })
  .strict();

/**
 * Trace a runtime with OpenTelemetry: from now on each run becomes a span (`invoke_agent`), with a child span per
 * model call (`chat {model}`, GenAI semantic conventions: provider, model, token usage, finish reason), per tool call
 * (`execute_tool {name}`), per compaction, and per queued message's wait (`agentlanes.queue_wait`, from its
 * acceptance to its run's start); failover rotations and fallbacks, cooldowns and lane waits are span events with
 * their reason. Spans are built from the runtime's events, so the runner carries no tracing code. Message text stays
 * out of spans unless `recordContent` is set. Resolves nothing; returns the function that stops tracing (spans still
 * open end then, marked `agentlanes.trace.cut`). Bad options throw `invalid_input`.
 */
export function traceRuntime(
  runtime: Pick<Runtime, 'events'>,
  options: TraceRuntimeOptions = {},
): () => Promise<void> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new RuntimeError('invalid_input', `traceRuntime: ${z.prettifyError(parsed.error)}`);
  }
  const { recordContent, agentName, consumer } = parsed.data;
  const tracer = parsed.data.tracer ?? trace.getTracer('agentlanes');
  const onError = parsed.data.onError ?? ((error: unknown) => diag.error('agentlanes tracing failed', error));
  const spans = new RunSpans({ tracer, recordContent, agentName });
  const types = recordContent ? [...tracedTypes, 'assistant.delta' as const] : [...tracedTypes];
  const controller = new AbortController();
  const done = (async () => {
    const stream = runtime.events({
      after: 'now',
      types,
      signal: controller.signal,
      ...(consumer === undefined ? {} : { consumer }),
    });
    for await (const event of stream) {
      try {
        follow(spans, event);
      } catch (error) {
        onError(error);
      }
    }
  })()
    .catch(onError)
    .finally(() => spans.endAll());
  return () => {
    controller.abort();
    return done;
  };
}

type Handlers = { readonly [T in EventType]?: (spans: RunSpans, event: EventOf<T>) => void };

/** A span event on the event's run span, named `agentlanes.<type>`. */
function mark(spans: RunSpans, event: RuntimeEvent, attributes: Record<string, string | number>): void {
  spans.mark(event.runId, `agentlanes.${event.type}`, event.at, attributes);
}

/** What each traced event does to the spans. */
const handlers: Handlers = {
  'message.received': (spans, event) => spans.messageReceived(event),
  'message.admitted': (spans, event) => spans.messagesAdmitted(event),
  'message.dropped': (spans, event) => spans.messageDropped(event),
  'run.started': (spans, event) => spans.runStarted(event),
  'run.resumed': (spans, event) => spans.runResumed(event),
  'run.paused': (spans, event) => spans.runPaused(event),
  'run.ended': (spans, event) => spans.runEnded(event),
  'cost.updated': (spans, event) => spans.modelCalled(event),
  'assistant.delta': (spans, event) => spans.assistantDelta(event),
  'tool.called': (spans, event) => spans.toolCalled(event),
  'tool.succeeded': (spans, event) => spans.toolSettled(event),
  'tool.failed': (spans, event) => spans.toolSettled(event),
  'tool.in_doubt': (spans, event) => spans.toolInDoubt(event),
  'compaction.started': (spans, event) => spans.compactionStarted(event),
  'compaction.ended': (spans, event) => spans.compactionEnded(event),
  'failover.rotated': (spans, event) =>
    mark(spans, event, {
      'agentlanes.failover.reason': event.reason,
      'gen_ai.provider.name': event.provider,
      'gen_ai.request.model': event.model,
      'agentlanes.failover.from_profile': event.fromProfile,
      ...(event.toProfile === undefined ? {} : { 'agentlanes.failover.to_profile': event.toProfile }),
    }),
  'failover.fallback': (spans, event) =>
    mark(spans, event, {
      'agentlanes.failover.reason': event.reason,
      'agentlanes.failover.from_provider': event.fromProvider,
      'agentlanes.failover.from_model': event.fromModel,
      'agentlanes.failover.to_provider': event.toProvider,
      'agentlanes.failover.to_model': event.toModel,
    }),
  'failover.waiting': (spans, event) =>
    mark(spans, event, {
      'agentlanes.auth_profile.id': event.profileId,
      'agentlanes.failover.wait_ms': event.waitMs,
    }),
  'profile.cooldown': (spans, event) =>
    mark(spans, event, {
      'agentlanes.auth_profile.id': event.profileId,
      'agentlanes.failover.reason': event.reason,
    }),
  'thinking.lowered': (spans, event) =>
    mark(spans, event, { 'agentlanes.thinking.from': event.from, 'agentlanes.thinking.to': event.to }),
  'lane.waited': (spans, event) =>
    mark(spans, event, { 'agentlanes.lane': event.lane, 'agentlanes.lane.waited_ms': event.waitedMs }),
  'tool.skipped': (spans, event) =>
    mark(spans, event, { 'gen_ai.tool.name': event.tool, 'agentlanes.tool.skip_reason': event.reason }),
  'approval.requested': (spans, event) =>
    mark(spans, event, { 'gen_ai.tool.name': event.tool, 'gen_ai.tool.call.id': event.toolCallId }),
  'approval.resolved': (spans, event) =>
    mark(spans, event, {
      'gen_ai.tool.call.id': event.toolCallId,
      'agentlanes.approval.decision': event.decision,
    }),
};

/** The event types spans are built from; `assistant.delta` only when content is recorded. */
const tracedTypes = (Object.keys(handlers) as EventType[]).filter((type) => type !== 'assistant.delta');

/** Turn one event into spans. */
function follow(spans: RunSpans, event: RuntimeEvent): void {
  const handle = handlers[event.type] as ((spans: RunSpans, event: RuntimeEvent) => void) | undefined;
  handle?.(spans, event);
}
