import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { seededRandom } from 'agentlanes/clock';
import { afterEach, describe, expect, it } from 'vitest';
import { startChild, type ChildCommand, type ChildLine, type RuntimeChild } from './child-process.js';
import { findViolations } from './ledger-checks.js';
import { drained, firstClosed, openRuns } from './ledger-probe.js';

const sessions = Array.from({ length: 8 }, (_, index) => `s${index}`);
/** The session the plan runs go to (two work steps each), away from the message order checks of the others. */
const planSession = 'p0';
const kills = 22;
/** Set AGENTLANES_CRASH_SEED to replay a failing schedule (the seed is printed with every run). */
const seed = Number(process.env['AGENTLANES_CRASH_SEED'] ?? 20_240_611);

const children = new Set<RuntimeChild>();
afterEach(async () => {
  await Promise.all([...children].map((child) => child.kill()));
  children.clear();
});

/** What the children acknowledged, the load they were given, and what each kill left open. */
function createTally(random: () => number) {
  const between = (low: number, high: number): number => low + Math.floor(random() * (high - low + 1));
  const sent = new Map<string, number>();
  let plans = 0;
  const tally = {
    between,
    acked: new Map<string, { disposition: string; runId?: string }>(),
    cancelled: new Set<string>(),
    failures: [] as string[],
    leftOpen: new Set<string>(),
    /** `runId/toolCallId` -> how many times the tool call started, across every child. */
    toolStarts: new Map<string, number>(),
    inDoubt: new Set<string>(),
    onLine: (line: ChildLine): void => {
      if ('toolStart' in line)
        tally.toolStarts.set(line.toolStart, (tally.toolStarts.get(line.toolStart) ?? 0) + 1);
      else if ('inDoubt' in line) tally.inDoubt.add(line.inDoubt);
      else if ('ack' in line) {
        const runId = line.runId === undefined ? {} : { runId: line.runId };
        tally.acked.set(line.ack, { disposition: line.disposition, ...runId });
      } else if ('cancel' in line && line.removed) tally.cancelled.add(line.cancel);
      else if ('failed' in line) tally.failures.push(`${line.failed}: ${line.code} ${line.message}`);
    },
    /** A send to a random session (ids numbered per session, across rounds), now and then a cancel. */
    nextCommand: (): ChildCommand => {
      if (random() < 0.04) return { op: 'plan', session: planSession, id: `plan-${++plans}` };
      const key = sessions[between(0, sessions.length - 1)] as string;
      const last = sent.get(key) ?? 0;
      if (last > 0 && random() < 0.05) return { op: 'cancel', session: key, id: `${key}-m${last}` };
      sent.set(key, last + 1);
      const id = `${key}-m${last + 1}`;
      const mode = random() < 0.3 ? 'collect' : 'followup';
      return { op: 'send', session: key, id, text: `message ${last + 1} of ${key}`, mode };
    },
  };
  return tally;
}
type Tally = ReturnType<typeof createTally>;

/**
 * Load the child, then return when it is time to kill it, with a letter for the log: `R` right after startup
 * recovery settled one of the runs the previous kill left open (resumed to its end or closed; `R?` if none within
 * 2 s), `E` within 30 ms of starting, `L` after 100-600 ms of load.
 */
async function loadUntilKill(
  child: RuntimeChild,
  tally: Tally,
  dbPath: string,
  open: string[],
): Promise<string> {
  const { between } = tally;
  const roll = between(0, 99);
  if (roll < 25 && open.length > 0) {
    for (let burst = between(1, 6); burst > 0; burst--) child.command(tally.nextCommand());
    return (await firstClosed(dbPath, open, 2_000)) ? 'R' : 'R?';
  }
  const loadMs = roll < 40 ? between(0, 30) : between(100, 600);
  const loadEnds = Date.now() + loadMs;
  while (Date.now() < loadEnds) {
    for (let burst = between(1, 3); burst > 0; burst--) child.command(tally.nextCommand());
    await pause(between(2, 12)); // pacing of the load, not synchronisation
  }
  return loadMs <= 30 ? 'E' : 'L';
}

describe('createRuntime (crash recovery)', () => {
  it('answers every acknowledged message once and in order, resuming cut runs and starting no tool call twice, when SIGKILLed at random moments', async () => {
    const started = Date.now();
    const directory = mkdtempSync(join(tmpdir(), 'agentlanes-crash-'));
    const dbPath = join(directory, 'bot.db');
    const tally = createTally(seededRandom(seed));
    const log: string[] = [];
    const schedule: string[] = [];
    const launch = async (label: string, childSeed: number): Promise<RuntimeChild> => {
      const child = startChild({ dbPath, seed: childSeed, label, log, onLine: tally.onLine });
      children.add(child);
      await child.ready;
      return child;
    };

    try {
      let open: string[] = [];
      for (let round = 1; round <= kills; round++) {
        const child = await launch(`round ${round}`, seed + round);
        const kind = await loadUntilKill(child, tally, dbPath, open);
        const exit = await child.kill();
        expect(exit, `round ${round} died before its kill`).toEqual({ code: null, signal: 'SIGKILL' });
        children.delete(child);
        open = await openRuns(dbPath);
        open.forEach((runId) => tally.leftOpen.add(runId));
        schedule.push(`${kind}${open.length}`);
      }
      const last = await launch('final', seed);
      await drained(dbPath, 30_000);
      expect(await last.end()).toEqual({ code: 0, signal: null });
      children.delete(last);

      const result = await findViolations(dbPath, { ...tally, sessions: [...sessions, planSession] });
      console.log(
        `crash test: seed ${seed}, ${kills} kills (kind and runs left open: ${schedule.join(' ')}), ` +
          `${result.resumedRuns} runs completed after a resume, ${tally.inDoubt.size} tool calls in doubt, ` +
          `${result.crashedRuns} runs closed after their resumes, ${result.failedPlans} plans failed on a step in ` +
          `doubt, of ${result.runs}; ${result.messages} messages ` +
          `in the inbox, ${tally.acked.size} acknowledged, ${tally.cancelled.size} cancelled, ${Date.now() - started} ms`,
      );
      expect(tally.failures).toEqual([]);
      expect(result.violations).toEqual([]);
      // No tool call starts twice: one in doubt is answered by the operator, never run again on its own.
      expect([...tally.toolStarts].filter(([, count]) => count > 1)).toEqual([]);
      expect(result.resumedRuns).toBeGreaterThan(0);
      expect(result.resumedRuns + result.crashedRuns + result.failedPlans).toBe(tally.leftOpen.size);
      rmSync(directory, { recursive: true, force: true });
    } catch (error) {
      console.error(`crash test failed: seed ${seed}, ledger kept at ${dbPath}\n${log.join('\n')}`);
      throw error;
    }
    // A budget against a hang, not a speed limit: a loaded machine runs the 30+ kills several times slower.
  }, 600_000);
});
