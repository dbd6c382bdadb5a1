import type { Clock } from '../../core/clock.js';
import type { Random } from '../../core/ids.js';
import type { ModelRequest } from '../../providers/model-provider.js';
import { scriptedModel, type ScriptEntry, type ScriptedModel } from '../../providers/scripted-model.js';

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

/**
 * The demo's model: a scripted model that answers every request with a few dozen words streamed token by
 * token, and asks for the `lookup_order` tool when the user mentions an order.
 */
export function createDemoModel(clock: Clock, random: Random, tokenDelayMs: number): ScriptedModel {
  return scriptedModel(
    (request: ModelRequest): ScriptEntry => {
      const last = request.messages.at(-1);
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
