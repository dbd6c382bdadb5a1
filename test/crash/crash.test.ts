import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { seededRandom } from 'agentlanes';
import { afterEach, describe, expect, it } from 'vitest';
import { startChild, type ChildCommand, type ChildLine, type RuntimeChild } from './child-process.js';
import { findViolations } from './ledger-checks.js';

const sessions = Array.from({ length: 8 }, (_, index) => `s${index}`);
const kills = 22;
/** Set AGENTLANES_CRASH_SEED to replay a failing schedule (the seed is printed with every run). */
const seed = Number(process.env['AGENTLANES_CRASH_SEED'] ?? 20_240_611);

const children = new Set<RuntimeChild>();
afterEach(async () => {
  await Promise.all([...children].map((child) => child.kill()));
  children.clear();
});

/** Runs still `running` in the file: what a kill just left open. */
function openRuns(dbPath: string): string[] {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare("SELECT run_id FROM runs WHERE status = 'running'").all() as { run_id: string }[];
    return rows.map((row) => row.run_id);
  } finally {
    db.close();
  }
}

/** Poll the file (read-only, beside the writing child) until no message is pending and no run is open. */
async function drained(dbPath: string, timeoutMs: number): Promise<void> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  const count = db.prepare(
    "SELECT (SELECT count(*) FROM inbox WHERE status IN ('pending', 'steered')) AS pending, (SELECT count(*) FROM runs WHERE status = 'running') AS running",
  );
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const backlog = count.get() as { pending: number; running: number };
      if (backlog.pending === 0 && backlog.running === 0) return;
      if (Date.now() > deadline) throw new Error(`the last child did not drain: ${JSON.stringify(backlog)}`);
      await pause(25);
    }
  } finally {
    db.close();
  }
}

describe('createRuntime (crash recovery)', () => {
  it('keeps every acknowledged message exactly once and in order when the process is SIGKILLed at random moments', async () => {
    const started = Date.now();
    const directory = mkdtempSync(join(tmpdir(), 'agentlanes-crash-'));
    const dbPath = join(directory, 'bot.db');
    const random = seededRandom(seed);
    const between = (low: number, high: number): number => low + Math.floor(random() * (high - low + 1));
    const log: string[] = [];
    const sent = new Map<string, number>();
    const acked = new Map<string, { disposition: string; runId?: string }>();
    const cancelled = new Set<string>();
    const failures: string[] = [];
    const leftOpen = new Set<string>();
    const openAtKill: number[] = [];

    const onLine = (line: ChildLine): void => {
      if ('ack' in line) acked.set(line.ack, { disposition: line.disposition, ...(line.runId ? { runId: line.runId } : {}) });
      else if ('cancel' in line && line.removed) cancelled.add(line.cancel);
      else if ('failed' in line) failures.push(`${line.failed}: ${line.code} ${line.message}`);
    };
    const nextCommand = (): ChildCommand => {
      const key = sessions[between(0, sessions.length - 1)] as string;
      const last = sent.get(key) ?? 0;
      if (last > 0 && random() < 0.05) return { op: 'cancel', session: key, id: `${key}-m${last}` };
      sent.set(key, last + 1);
      const mode = random() < 0.3 ? 'collect' : 'followup';
      return { op: 'send', session: key, id: `${key}-m${last + 1}`, text: `message ${last + 1} of ${key}`, mode };
    };
    const launch = async (label: string, childSeed: number): Promise<RuntimeChild> => {
      const child = startChild({ dbPath, seed: childSeed, label, log, onLine });
      children.add(child);
      await child.ready;
      return child;
    };

    try {
      for (let round = 1; round <= kills; round++) {
        const child = await launch(`round ${round}`, seed + round);
        // Some kills land in startup recovery, the rest after a while of load.
        const loadMs = random() < 0.2 ? between(0, 30) : between(100, 600);
        const loadEnds = Date.now() + loadMs;
        while (Date.now() < loadEnds) {
          for (let burst = between(1, 3); burst > 0; burst--) child.command(nextCommand());
          await pause(between(2, 12)); // pacing of the load, not synchronisation
        }
        expect(await child.kill(), `round ${round} died before its kill`).toEqual({ code: null, signal: 'SIGKILL' });
        children.delete(child);
        const open = openRuns(dbPath);
        open.forEach((runId) => leftOpen.add(runId));
        openAtKill.push(open.length);
      }
      const last = await launch('final', seed);
      await drained(dbPath, 30_000);
      expect(await last.end()).toEqual({ code: 0, signal: null });
      children.delete(last);

      const result = await findViolations(dbPath, { sessions, acked, cancelled, leftOpen });
      console.log(
        `crash test: seed ${seed}, ${kills} kills (open runs at each: ${openAtKill.join(' ')}), ` +
          `${result.crashedRuns} crashed runs of ${result.runs}, ${result.messages} messages in the inbox, ` +
          `${acked.size} acknowledged, ${cancelled.size} cancelled, ${Date.now() - started} ms`,
      );
      expect(failures).toEqual([]);
      expect(result.violations).toEqual([]);
      expect(result.crashedRuns).toBeGreaterThan(0);
      expect(result.crashedRuns).toBe(leftOpen.size);
      rmSync(directory, { recursive: true, force: true });
    } catch (error) {
      console.error(`crash test failed: seed ${seed}, ledger kept at ${dbPath}\n${log.join('\n')}`);
      throw error;
    }
  }, 180_000);
});
