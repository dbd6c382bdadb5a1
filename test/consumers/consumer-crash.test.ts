import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { storedEventRows } from '../support/sqlite-statements.js';
import { afterEach, describe, expect, it } from 'vitest';

/** One event as the child process received it from its durable consumer. */
interface Seen {
  readonly cursor: number;
  readonly type: string;
  readonly seq: number;
  readonly sessionKey: string;
  readonly runId: string | null;
  readonly status?: string;
}

const childPath = join(import.meta.dirname, 'consumer-child.ts');
const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/**
 * Run the child on `dbPath` until `stop(seen)` says so (then SIGKILL it), or until it has been quiet for a while
 * after `quietAfter` events (then SIGKILL too: a consumer never ends by itself). Resolves every event it printed.
 */
function runChild(
  dbPath: string,
  sessions: number,
  stop: (seen: readonly Seen[]) => boolean,
): Promise<Seen[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', childPath, dbPath, String(sessions)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const seen: Seen[] = [];
  const log: string[] = [];
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => log.push(chunk));
  createInterface({ input: child.stdout }).on('line', (text) => {
    const line = JSON.parse(text) as Seen | { ready: true };
    if ('ready' in line) return;
    seen.push(line);
    if (stop(seen) && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    child.once('close', (code, signal) => {
      if (signal === 'SIGKILL') resolve(seen);
      else reject(new Error(`the child exited by itself (code ${code}): ${log.join('')}`));
    });
  });
}

/** The events table of the ledger at `dbPath`, by cursor. */
function recordedEvents(
  dbPath: string,
): Map<number, { type: string; seq: number; session_key: string; run_id: string | null }> {
  const database = new Database(dbPath, { readonly: true });
  const rows = storedEventRows(database);
  database.close();
  return new Map(rows.map((row) => [row.cursor, row]));
}

describe('a durable consumer killed with SIGKILL', () => {
  it('saw only committed cursors, and resumes after the last event it processed with nothing skipped', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'agentlanes-consumer-crash-'));
    directories.push(directory);
    const dbPath = join(directory, 'ledger.db');

    // Killed while six runs stream tokens, mid-way through handling an event.
    const before = await runChild(
      dbPath,
      6,
      (seen) =>
        seen.length >= 120 &&
        seen.some((event) => event.type === 'run.started' && event.sessionKey === 'chat:hang'),
    );
    expect(before.length).toBeGreaterThanOrEqual(120);

    // Every cursor the consumer saw names that very event in the file: it was durable before it was delivered.
    const recorded = recordedEvents(dbPath);
    for (const event of before) {
      const row = recorded.get(event.cursor);
      if (row !== undefined) {
        expect({ type: row.type, seq: row.seq, sessionKey: row.session_key }).toEqual({
          type: event.type,
          seq: event.seq,
          sessionKey: event.sessionKey,
        });
        continue;
      }
      // A token delta is stored coalesced, under the cursor of the last token of its row.
      expect(event.type).toBe('assistant.delta');
      const later = [...recorded.values()].some(
        (candidate) =>
          candidate.type === 'assistant.delta' &&
          candidate.run_id === event.runId &&
          candidate.seq >= event.seq,
      );
      expect(later, `delta ${event.cursor} of ${event.runId} is in a stored row`).toBe(true);
    }

    // Restarted: the consumer goes on from where it stood, and sees the runs the crash cut off end as crashed.
    const started = [...recorded.values()].filter((row) => row.type === 'run.started');
    const open = new Set(started.map((row) => row.run_id));
    for (const row of recorded.values()) if (row.type === 'run.ended') open.delete(row.run_id);
    expect(open.size).toBeGreaterThan(0);
    const lastSeen = (before.at(-1) as Seen).cursor;
    const after = await runChild(dbPath, 0, (seen) => {
      const ended = new Set(seen.filter((event) => event.type === 'run.ended').map((event) => event.runId));
      return [...open].every((runId) => ended.has(runId));
    });
    const first = after[0] as Seen;
    // At least once: the event being handled at the kill may come again, nothing before it does.
    expect(first.cursor).toBeGreaterThanOrEqual(lastSeen);
    expect(after.every((event) => event.cursor > lastSeen || event.cursor === lastSeen)).toBe(true);
    // No cursor seen before the crash names another event now.
    const seenBefore = new Map(before.map((event) => [event.cursor, event]));
    for (const event of after) {
      const earlier = seenBefore.get(event.cursor);
      if (earlier !== undefined && earlier.type !== 'assistant.delta') expect(event.type).toBe(earlier.type);
    }
    const crashed = after.filter((event) => event.type === 'run.ended' && open.has(event.runId));
    expect(new Set(crashed.map((event) => event.status))).toEqual(new Set(['crashed']));
  }, 60_000);
});
