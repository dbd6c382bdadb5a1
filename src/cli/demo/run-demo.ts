import { systemClock } from '../../core/clock.js';
import { seededRandom } from '../../core/ids.js';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteLedger } from '../../ledger/sqlite-ledger.js';
import { createRuntime } from '../../runtime/create-runtime.js';
import { defineTool } from '../../tools/define-tool.js';
import { z } from 'zod';
import { createDemoModel, createRateLimitedProvider } from './demo-model.js';
import { closingTable, countEvent, findLost, type DemoCounts } from './demo-report.js';
import { simulateUser, type ChannelLog } from './demo-users.js';
import { createDemoView } from './demo-view.js';

/** Options of the demo. */
export interface DemoOptions {
  /** Simulated chat users. @default 24 */
  readonly users: number;
  /** Seed of the simulation's randomness. @default 7 */
  readonly seed: number;
  /** Milliseconds between streamed tokens. @default 25 */
  readonly tokenDelayMs: number;
  /** The SQLite file the demo records to (replaced if it exists). @default agentlanes-demo.db in the temp folder */
  readonly path?: string;
  readonly output: NodeJS.WriteStream;
}

/**
 * `agentlanes demo`: a simulated chat channel on the scripted model — users sending bursts (collect), steering
 * mid-stream, one interrupt, one /stop, one waitForEnd — recorded in a SQLite ledger, with a live view and a
 * closing table whose `lost` is computed by checking every accepted message against the file read back. Resolves with the number of lost messages.
 */
export async function runDemo(options: DemoOptions): Promise<number> {
  const clock = systemClock;
  const random = seededRandom(options.seed);
  const path = options.path ?? join(tmpdir(), 'agentlanes-demo.db');
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-lock`]) rmSync(file, { force: true });
  const ledger = createSqliteLedger({ path });
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
  const runtime = createRuntime({
    ledger,
    providers: {
      scripted: createRateLimitedProvider(createDemoModel(clock, random, options.tokenDelayMs), clock),
      backup: createDemoModel(clock, random, options.tokenDelayMs),
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
  });
  const counts: DemoCounts = {
    runs: 0,
    completed: 0,
    steered: 0,
    collected: 0,
    interrupted: 0,
    aborted: 0,
    laneWaits: 0,
    tokens: 0,
    rotations: 0,
    fallbacks: 0,
    cooldowns: 0,
    approvalsRequested: 0,
    approved: 0,
  };
  const stopEvents = new AbortController();
  const approvals: Promise<void>[] = [];
  const following = (async () => {
    for await (const event of runtime.events({ signal: stopEvents.signal })) {
      countEvent(counts, event);
      // The simulated operator reads each request for 400 ms, then approves it.
      if (event.type === 'approval.requested') {
        const { sessionKey, toolCallId } = event;
        approvals.push(
          clock
            .sleep(400)
            .then(() => runtime.session(sessionKey).approve({ toolCallId, decision: 'approve' })),
        );
      }
    }
  })();
  const log: ChannelLog = { accepted: new Map(), sent: 0, duplicates: 0, rejected: 0, stops: 0, waits: [] };
  const sessions = Array.from({ length: options.users }, (_, index) =>
    runtime.session(`demo:user-${String(index + 1).padStart(2, '0')}`),
  );
  const started = clock.now();
  const view = createDemoView(options.output);
  const timer = setInterval(() => view.draw(sessions, counts, clock.now() - started), 100);
  try {
    await Promise.all(sessions.map((_, index) => simulateUser(runtime, index, { clock, random, log })));
    // Let every queue drain and every run end.
    while (sessions.some((session) => session.status().state !== 'idle' || session.status().queued > 0)) {
      await clock.sleep(50);
    }
    await Promise.all(approvals);
  } finally {
    clearInterval(timer);
  }
  view.draw(sessions, counts, clock.now() - started);
  view.done();
  await runtime.close();
  stopEvents.abort();
  await following;
  await ledger.close();
  // The no-loss check reads the file back: what counts is what is durable.
  const record = createSqliteLedger({ path, readonly: true });
  const lost = await findLost(record, log);
  await record.close();
  const output = options.output;
  output.write('\n');
  for (const line of log.waits) output.write(`${line}\n`);
  for (const line of closingTable(counts, log, lost.length, (clock.now() - started) / 1000))
    output.write(`${line}\n`);
  if (lost.length > 0) output.write(`lost messages: ${lost.join(', ')}\n`);
  output.write(`\nrecorded in ${path}; try: npx agentlanes replay demo:user-01 --db ${path}\n`);
  return lost.length;
}
