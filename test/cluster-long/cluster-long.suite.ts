import { describe, expect, it, onTestFailed } from 'vitest';
import { seededRandom } from '../../src/core/ids.js';
import { freshSchema } from '../support/postgres.js';
import type { Worker } from '../cluster/cluster-driver.js';
import { clusterFixture } from '../cluster/cluster-fixture.js';
import { auditWrites, installWriteAudit } from '../cluster/write-audit.js';
import { checkCluster, resumeReport, type Acked } from './cluster-checks.js';

/** Sizes (the by default; smaller ones through the environment for a quick run). */
const sessions = Number(process.env.CLUSTER_LONG_SESSIONS ?? 200);
const kills = Number(process.env.CLUSTER_LONG_KILLS ?? 30);
const stops = Number(process.env.CLUSTER_LONG_STOPS ?? 10);
const messagesPerSession = Number(process.env.CLUSTER_LONG_MESSAGES ?? 3);
const modes = ['followup', 'collect', 'steer', 'interrupt'] as const;

describe('three workers under SIGKILL and SIGSTOP', () => {
  it('acknowledged messages run once, in order, with no overlapping run, and no write lands after a foreign claim or its lease', async () => {
    const random = seededRandom(Number(process.env.CLUSTER_LONG_SEED ?? 16));
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const schema = freshSchema();
    // Every committed write against the claims and leases (write-audit.ts), besides the ledger's invariants.
    await installWriteAudit(schema);
    const fixture = clusterFixture(schema);
    onTestFailed(() => console.log(fixture.log.join('')));
    const workers: Worker[] = await Promise.all(['w0', 'w1', 'w2'].map((name) => fixture.start(name)));
    const acked: Acked[] = [];
    const keys = Array.from({ length: sessions }, (_, index) => `chat-${index}`);
    let counter = 0;
    /** Send one message through a random live worker; a worker killed under the call makes it unacknowledged. */
    const sendOne = async (sessionKey: string): Promise<void> => {
      const messageId = `m-${++counter}`;
      const mode = pick(modes);
      const worker = pick(workers);
      const text = random() < 0.3 ? 'slow:200' : `hello ${messageId}`;
      try {
        const result = await worker.call<{ disposition: string }>(
          sessionKey,
          'send',
          { id: messageId, text },
          { mode },
        );
        if (result.disposition !== 'rejected' && result.disposition !== 'duplicate')
          acked.push({ sessionKey, messageId, queued: mode === 'followup' || mode === 'collect' });
      } catch {
        // Not acknowledged (the worker died under the call): nothing is promised for it.
      }
    };
    const total = sessions * messagesPerSession;
    const killAt = new Set(
      Array.from({ length: kills }, (_, index) => Math.floor(((index + 1) * total) / (kills + 1))),
    );
    const stopAt = new Set(
      Array.from({ length: stops }, (_, index) => Math.floor(((index + 0.5) * total) / (stops + 1))),
    );
    const round: Promise<void>[] = [];
    // Small enough rounds for a boundary before every kill and stall; never two messages of a session in one.
    const roundSize = Math.max(1, Math.min(sessions, Math.floor(total / (kills + stops + 1))));
    for (let step = 0; step < total; step++) {
      // Messages of one session go one at a time (acknowledgement order is the order promised).
      const sessionKey = keys[step % sessions] as string;
      round.push(sendOne(sessionKey));
      if (round.length < roundSize && step < total - 1) continue;
      // Kills and stalls come between rounds: a session never has two messages in flight (their order is defined).
      await Promise.all(round.splice(0));
      for (const at of [...killAt].filter((due) => due <= step)) {
        killAt.delete(at);
        const index = Math.floor(random() * workers.length);
        const victim = workers[index] as Worker;
        victim.signal('SIGKILL');
        await victim.exited;
        workers[index] = await fixture.start(`${victim.name}'`);
      }
      for (const at of [...stopAt].filter((due) => due <= step)) {
        stopAt.delete(at);
        const index = Math.floor(random() * workers.length);
        const stalled = workers[index] as Worker;
        const others = workers.filter((worker) => worker !== stalled);
        stalled.signal('SIGSTOP');
        // Keep the stall until the others answered for five sessions (a takeover when the stalled one held them).
        for (const key of keys.slice(0, 5)) await sendOneThrough(others, key);
        stalled.signal('SIGCONT');
      }
    }
    /** Send through one of `through` (the stalled worker excluded). */
    async function sendOneThrough(through: Worker[], sessionKey: string): Promise<void> {
      const messageId = `m-${++counter}`;
      const result = await pick(through).call<{ disposition: string }>(sessionKey, 'send', {
        id: messageId,
        text: 'x',
      });
      if (result.disposition !== 'rejected' && result.disposition !== 'duplicate')
        acked.push({ sessionKey, messageId, queued: true });
    }
    // Let every session settle, through a live worker.
    for (const key of keys) {
      let result = await (workers[0] as Worker).call<{ status: string }>(key, 'waitForEnd', {
        timeoutMs: 30_000,
      });
      while (result.status !== 'idle') {
        result = await (workers[0] as Worker).call(key, 'waitForEnd', { timeoutMs: 30_000 });
      }
    }
    expect(acked.length).toBeGreaterThan(total / 2);
    const problems = await checkCluster(fixture.schema, acked);
    if (problems.length > 0 && process.env.CLUSTER_LONG_DEBUG !== undefined) {
      const session = /^([^/]+)/u.exec(problems[0] ?? '')?.[1];
      console.log(JSON.stringify(acked.filter((entry) => entry.sessionKey === session)));
      console.log(
        await fixture.query(
          'SELECT message_id, mode, status, run_id, ord FROM inbox WHERE session_key = $1 ORDER BY ord',
          [session],
        ),
      );
      console.log(
        await fixture.query(
          'SELECT id, run_id, status, message_ids FROM runs WHERE session_key = $1 ORDER BY id',
          [session],
        ),
      );
    }
    expect(problems).toEqual([]);
    // Runs the kills cut resume on the worker that takes their session over (recovery's default budget: 2).
    const recovery = await resumeReport(schema, 2);
    console.log(
      `cluster suite: ${recovery.completedAfterResume} runs completed after a resume, ${recovery.inDoubt} calls in doubt, ` +
        `${recovery.closedAfterBudget} runs closed crashed`,
    );
    expect(recovery.problems).toEqual([]);
    const audit = await auditWrites(schema);
    expect(audit.writes).toBeGreaterThan(0);
    expect(audit.afterForeignClaim).toEqual([]);
    expect(audit.afterLease).toEqual([]);
  });
});
