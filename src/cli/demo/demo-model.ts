import type { Clock } from '../../core/index.js';
import type { Random } from '../../core/index.js';
import { ProviderError, type ModelProvider, type ModelRequest } from '../../providers/index.js';
import { scriptedModel, type ScriptEntry, type ScriptedModel } from '../../providers/index.js';

const words = (
  'sure here is what I found about your order the parcel left our warehouse this morning and should arrive ' +
  'within two days if anything changes I will let you know right away thanks for your patience'
).split(' ');

function answer(random: Random, count: number): string {
  const picked: string[] = [];
  for (let index = 0; index < count; index++)
    picked.push(words[Math.floor(random() * words.length)] as string);
  return picked.join(' ');
}

/** A correction a user steers into a running answer starts like this ("actually, answer in metric units"). */
const steerPattern = /^actually,?\s*(.+)$/i;

/** The answer to a steered run: it takes the correction up, so the steer visibly changes what the user reads. */
export function steeredAnswer(correction: string): string {
  return (
    `Got it, ${correction.replace(/[.!]+$/, '')}: your parcel weighs 2.4 kg, it is 310 km away and ` +
    'should arrive within two days.'
  );
}

/**
 * The demo's model: a scripted model that answers every request with a few dozen words streamed token by
 * token, takes up a steered correction ("actually, …"), asks for the `lookup_order` tool when the user mentions
 * an order, and for the high-risk `refund_order` tool when they ask for a refund.
 */
export function createDemoModel(clock: Clock, random: Random, tokenDelayMs: number): ScriptedModel {
  return scriptedModel(
    (request: ModelRequest): ScriptEntry => {
      const last = request.messages.at(-1);
      const steer = last?.role === 'user' ? steerPattern.exec(last.content.split('\n\n').at(-1) ?? '') : null;
      if (steer !== null) return { text: steeredAnswer(steer[1] ?? ''), tokenDelayMs };
      const refund = last?.role === 'user' ? /refund order #(\d+)/.exec(last.content) : null;
      if (refund !== null) {
        return {
          text: 'I can refund that once an operator approves.',
          tokenDelayMs,
          toolCalls: [{ name: 'refund_order', args: { orderId: refund[1] ?? '0', amount: 49 } }],
        };
      }
      if (last?.role === 'user' && /order #\d+/.test(last.content)) {
        const orderId = /order #(\d+)/.exec(last.content)?.[1] ?? '0';
        return {
          text: 'Let me look that up.',
          tokenDelayMs,
          toolCalls: [{ name: 'lookup_order', args: { orderId } }],
        };
      }
      return { text: answer(random, 12 + Math.floor(random() * 28)), tokenDelayMs };
    },
    { clock },
  );
}

/**
 * The demo's provider behind auth profiles: `demo-key-1` hits a rate limit between 1.5 s and 3.5 s into the demo,
 * `demo-key-2` between 2.5 s and 3.0 s (so for a moment every profile is cooling and runs fall back to the backup
 * model). Everything else goes to the scripted model.
 */
export function createRateLimitedProvider(inner: ModelProvider, clock: Clock): ModelProvider {
  const started = clock.now();
  const limited: Record<string, readonly [number, number]> = {
    'demo-key-1': [1500, 3500],
    'demo-key-2': [2500, 3000],
  };
  return {
    async *stream(request, options) {
      const window = limited[options.credential?.profileId ?? ''];
      const elapsed = clock.now() - started;
      if (window !== undefined && elapsed >= window[0] && elapsed < window[1]) {
        throw new ProviderError('rate limit exceeded for this key', { status: 429, retryAfterMs: 2000 });
      }
      yield* inner.stream(request, options);
    },
  };
}
