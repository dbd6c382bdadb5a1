import type { Clock } from '../../core/index.js';
import type { DeliveryIntent, DeliveryStore } from '../../ledger/index.js';
import { createBlockChunker } from '../../policies/index.js';
import type { ReplyTarget } from './reply-target.js';
import { describeError } from './secret-scrubber.js';

/** A run's reply streamed into one platform message (platforms that can edit): its id and text so far. */
export interface StreamedMessage {
  readonly platformMessageId: string;
  readonly text: string;
}

/** What delivering a block needs: the ledger, who delivers, and where a doubt is reported. */
export interface BlockDeliveryContext {
  readonly ledger: DeliveryStore;
  readonly consumer: string;
  readonly clock: Clock;
  /** The message each run's reply streams into, by run id (in memory: lost on restart, then a new one starts). */
  readonly streams: Map<string, StreamedMessage>;
  /** Mask secrets (the bot token) in a text that is recorded or reported. */
  readonly scrub: (text: string) => string;
  /** Report a block recorded in doubt (a `delivery.in_doubt` event of its session). */
  readonly reportInDoubt: (intent: DeliveryIntent, reason: string) => Promise<void>;
}

/** One block to deliver: the text, where it goes, and the cursor of the event that carried it. */
export interface BlockToDeliver {
  readonly sessionKey: string;
  readonly runId: string;
  readonly blockIndex: number;
  readonly text: string;
  readonly cursor: number;
  readonly target: ReplyTarget;
}

/** A short reason from a send failure (its chain of causes), with nothing that could be a token. */
function failureReason(context: BlockDeliveryContext, error: unknown): string {
  const scrubbed = context.scrub(describeError(error));
  return `send failed: ${scrubbed.slice(0, 300)}`;
}

/** How much of a limit a piece of a split block aims at: formatting does not grow every part evenly. */
const splitMargin = 0.9;

/**
 * `text` cut into pieces that each measure at most `limit` (measured as the platform counts what is sent, e.g.
 * after Markdown escaping), at paragraph, line, sentence or word breaks: a long block is split, never cut short.
 */
export function splitToFit(text: string, limit: number, measure: (text: string) => number): string[] {
  const size = measure(text);
  if (size <= limit || text.length <= 1) return [text];
  const maxChars = Math.max(1, Math.floor(((limit * text.length) / size) * splitMargin));
  const chunker = createBlockChunker({ minChars: Math.max(1, Math.floor(maxChars / 2)), maxChars });
  let pieces = [...chunker.push(text), ...chunker.flush()];
  if (pieces.length <= 1) {
    // No break found that shortens it: halve it (never inside a surrogate pair).
    let middle = Math.floor(text.length / 2);
    if (/[\uDC00-\uDFFF]/.test(text[middle] ?? '')) middle--;
    pieces = [text.slice(0, middle), text.slice(middle)];
  }
  return pieces.flatMap((piece) => splitToFit(piece, limit, measure));
}

/**
 * Send the block: edit it into the run's streamed message when the result fits, else post it as new messages
 * (one, or several when it is longer than the limit; their ids joined by ',').
 */
async function send(context: BlockDeliveryContext, block: BlockToDeliver): Promise<string> {
  const { target } = block;
  const streamed = context.streams.get(block.runId);
  const limit = target.editLimit ?? 4000;
  const measure = target.measure ?? ((text: string) => text.length);
  if (target.edit !== undefined && streamed !== undefined) {
    const text = `${streamed.text}\n\n${block.text}`;
    if (measure(text) <= limit) {
      await target.edit(streamed.platformMessageId, text);
      context.streams.set(block.runId, { platformMessageId: streamed.platformMessageId, text });
      return streamed.platformMessageId;
    }
  }
  // A target that neither edits nor measures splits what it posts itself (grammY's cuts at Telegram's limit).
  const split = target.edit !== undefined || target.measure !== undefined;
  const pieces = split ? splitToFit(block.text, limit, measure) : [block.text];
  const ids: string[] = [];
  for (const piece of pieces) {
    const platformMessageId = await target.post(piece);
    ids.push(platformMessageId);
    if (target.edit !== undefined) context.streams.set(block.runId, { platformMessageId, text: piece });
  }
  return ids.join(',');
}

/** Record the block in doubt and report it (an event): it is neither sent again nor forgotten. */
async function doubt(context: BlockDeliveryContext, intent: DeliveryIntent, reason: string): Promise<void> {
  await context.ledger.markInDoubt(intent);
  await context.reportInDoubt(intent, reason);
}

/**
 * A block found `sending` (its send was in flight when the process died): ask the platform. True when it must be
 * sent (the platform shows no message for it); otherwise it is recorded delivered or in doubt here.
 */
async function resolveInFlight(
  context: BlockDeliveryContext,
  block: BlockToDeliver,
  intent: DeliveryIntent,
  since: number,
): Promise<boolean> {
  const lookup = (await block.target.lookup?.(block.text, since)) ?? { found: 'unknown' as const };
  switch (lookup.found) {
    case 'absent':
      return true;
    case 'present':
      await context.ledger.recordDelivery({
        ...intent,
        platformMessageId: lookup.platformMessageId,
        cursor: block.cursor,
      });
      return false;
    case 'unknown':
      await doubt(
        context,
        intent,
        'the send was in flight at a crash and the platform cannot show whether it arrived',
      );
      return false;
  }
}

/**
 * Deliver one reply block exactly once: skipped when already delivered (or in doubt); the `sending` intent is
 * written before the send, and the delivered record with the consumer's cursor in one transaction after it.
 */
export async function deliverBlock(context: BlockDeliveryContext, block: BlockToDeliver): Promise<void> {
  const { ledger, consumer } = context;
  const key = { consumer, runId: block.runId, blockIndex: block.blockIndex };
  const intent: DeliveryIntent = { ...key, sessionKey: block.sessionKey, at: context.clock.now() };
  const stored = await ledger.getDelivery(key);
  if (stored !== undefined && stored.status !== 'sending') return;
  if (stored !== undefined && !(await resolveInFlight(context, block, intent, stored.updatedAt))) return;
  if (stored === undefined && !(await ledger.markSending(intent))) return;
  let platformMessageId: string;
  try {
    platformMessageId = await send(context, block);
  } catch (error) {
    // Not retried: a failure may come after the platform took the message, and a retry could duplicate it.
    await doubt(context, intent, failureReason(context, error));
    return;
  }
  await ledger.recordDelivery({
    ...intent,
    at: context.clock.now(),
    platformMessageId,
    cursor: block.cursor,
  });
}
