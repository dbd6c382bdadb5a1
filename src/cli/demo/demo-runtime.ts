import type { Clock } from '../../core/index.js';
import { sequentialIds, type Random } from '../../core/index.js';
import type { Ledger } from '../../ledger/index.js';
import { createRuntime, type Runtime } from '../../runtime/index.js';
import { defineTool } from '../../tools/index.js';
import { z } from 'zod';
import { createDemoModel, createRateLimitedProvider } from './demo-model.js';

/**
 * The demo's runtime: the scripted model behind two rate-limited keys with a backup model, a lookup tool and a
 * high-risk refund tool, collect mode with short debounce, six concurrent runs. Everything on `clock` and
 * `random`, ids counted, so one seed replays the same show.
 */
export function createDemoRuntime(options: {
  readonly clock: Clock;
  readonly random: Random;
  readonly ledger: Ledger;
  readonly tokenDelayMs: number;
}): Runtime {
  const { clock, random, ledger, tokenDelayMs } = options;
  const lookupOrder = defineTool({
    name: 'lookup_order',
    description: 'Look up an order by id',
    input: z.object({ orderId: z.string() }),
    execute: async ({ orderId }, { signal }) => {
      await clock.sleep(120, signal);
      return { orderId, status: 'shipped', eta: '2 days' };
    },
  });
  const refundOrder = defineTool({
    name: 'refund_order',
    description: 'Refund an order (needs an operator)',
    risk: 'high',
    input: z.object({ orderId: z.string(), amount: z.number() }),
    execute: async ({ orderId, amount }, { signal }) => {
      await clock.sleep(80, signal);
      return { orderId, refunded: amount };
    },
  });
  return createRuntime({
    ledger,
    providers: {
      scripted: createRateLimitedProvider(createDemoModel(clock, random, tokenDelayMs), clock),
      backup: createDemoModel(clock, random, tokenDelayMs),
    },
    model: {
      provider: 'scripted',
      model: 'demo-model',
      fallbacks: [{ provider: 'backup', model: 'backup-model' }],
    },
    authProfiles: [
      { id: 'demo-key-1', provider: 'scripted', type: 'api_key', secret: 'demo-secret-key-one' },
      { id: 'demo-key-2', provider: 'scripted', type: 'api_key', secret: 'demo-secret-key-two' },
    ],
    queue: { mode: 'collect', debounceMs: 300, maxWaitMs: 1200 },
    globalLane: { concurrency: 6, warnAfterMs: 500 },
    tools: [lookupOrder, refundOrder],
    systemPrompt: 'You are the support agent of a parcel shop.',
    clock,
    random,
    ids: sequentialIds(),
  });
}
