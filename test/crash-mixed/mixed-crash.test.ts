import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { seededRandom } from 'agentlanes/clock';
import { afterEach, describe, expect, it } from 'vitest';
import { startChild, type RuntimeChild } from '../crash/child-process.js';
import { openRuns } from '../crash/ledger-probe.js';
import { findMixedViolations } from './mixed-checks.js';
import { settled } from './mixed-probe.js';
import type { MixedCommand, MixedLine } from './mixed-protocol.js';
import { createTally, createWorkload, recordLine, type Tally } from './mixed-workload.js';

const childScript = join(import.meta.dirname, 'mixed-child.ts');
/** Set AGENTLANES_CRASH_KILLS for a longer (or shorter) run; at least 30 in CI. */
const kills = Number(process.env['AGENTLANES_CRASH_KILLS'] ?? 32);
/** Set AGENTLANES_CRASH_SEED to replay a failing schedule (the seed is printed with every run). */
const seed = Number(process.env['AGENTLANES_CRASH_SEED'] ?? 20_250_301);

type MixedChild = RuntimeChild<MixedCommand>;
const children = new Set<MixedChild>();
afterEach(async () => {
  await Promise.all([...children].map((child) => child.kill()));
  children.clear();
});

/**
 * Load the child with bursts of commands, then return when it is time to kill it, with a letter for the log:
 * `E` within 40 ms of startup (recovery is still at work), `L` after 500-4500 ms of load.
 */
async function loadUntilKill(
  child: MixedChild,
  workload: ReturnType<typeof createWorkload>,
): Promise<string> {
  const { between } = workload;
  const early = between(0, 99) < 20;
  const loadEnds = Date.now() + (early ? between(0, 40) : between(500, 4_500));
  while (Date.now() < loadEnds) {
    for (const command of workload.burst()) child.command(command);
    await pause(between(6, 25)); // pacing of the load, not synchronisation
  }
  return early ? 'E' : 'L';
}

function summaryOf(tally: Tally, findings: Awaited<ReturnType<typeof findMixedViolations>>, ms: number) {
  const { counts } = findings;
  return (
    `mixed crash suite: seed ${seed}, kills ${kills}, acknowledged messages ${tally.acked.size}, ` +
    `lost ${counts.lost}, duplicated ${counts.duplicated}, misordered ${counts.misordered}, ` +
    `overlaps ${counts.overlap}, tools twice ${counts['tool-twice']}, other ${counts.other} | ` +
    `${findings.messages} inbox messages, ${findings.runs} runs (${findings.resumedRuns} completed after a resume, ` +
    `${findings.crashedRuns} crashed after their resumes or as plans, ${findings.inDoubt} tool calls in doubt, ` +
    `${findings.planRuns} plans), ${findings.toolExecutions} tool executions, ${findings.approvals} approvals, ` +
    `${findings.supplies} deferred results, ${tally.redeliveries.length} redeliveries, ` +
    `${tally.stale} stale operator decisions, ${ms} ms`
  );
}

describe('createRuntime (crash recovery under a mixed workload)', () => {
  it('keeps every acknowledged message once and in order, resumes cut runs, runs apart and tools single when the process is SIGKILLed 30+ times', async () => {
    expect(kills).toBeGreaterThanOrEqual(30);
    const started = Date.now();
    const directory = mkdtempSync(join(tmpdir(), 'agentlanes-crash-mixed-'));
    const dbPath = join(directory, 'bot.db');
    const tally = createTally();
    const workload = createWorkload(seededRandom(seed), tally);
    const log: string[] = [];
    const schedule: string[] = [];
    const launch = async (label: string, childSeed: number): Promise<MixedChild> => {
      const child = startChild<MixedLine, MixedCommand>({
        dbPath,
        seed: childSeed,
        label,
        log,
        script: childScript,
        extraArgs: [label],
        onLine: (line) => recordLine(tally, line),
      });
      children.add(child);
      await child.ready;
      return child;
    };

    try {
      for (let round = 1; round <= kills; round++) {
        const child = await launch(`r${round}`, seed + round);
        const kind = await loadUntilKill(child, workload);
        const exit = await child.kill();
        expect(exit, `round ${round} died before its kill`).toEqual({ code: null, signal: 'SIGKILL' });
        children.delete(child);
        const open = await openRuns(dbPath);
        open.forEach((runId) => tally.leftOpen.add(runId));
        schedule.push(`${kind}${open.length}`);
      }
      const roundsMs = Date.now() - started;
      const last = await launch('final', seed);
      await settled(dbPath, 90_000);
      expect(await last.end()).toEqual({ code: 0, signal: null });
      children.delete(last);
      const drainMs = Date.now() - started - roundsMs;

      const findings = await findMixedViolations(dbPath, tally);
      console.log(
        `${summaryOf(tally, findings, Date.now() - started)}\n` +
          `rounds ${roundsMs} ms, final drain ${drainMs} ms; kills (kind, runs left open): ${schedule.join(' ')}`,
      );
      expect(findings.violations).toEqual([]);
      expect(tally.failures).toEqual([]);
      expect(tally.background).toEqual([]);
      expect(findings.tornSideLines).toBe(0);
      // The workload reached what it is meant to exercise.
      expect(findings.resumedRuns).toBeGreaterThan(0);
      expect(findings.approvals).toBeGreaterThan(0);
      expect(findings.supplies).toBeGreaterThan(0);
      expect(findings.planRuns).toBeGreaterThan(0);
      rmSync(directory, { recursive: true, force: true });
    } catch (error) {
      console.error(`mixed crash suite failed: seed ${seed}, ledger kept at ${dbPath}\n${log.join('\n')}`);
      throw error;
    }
  }, 420_000);
});
