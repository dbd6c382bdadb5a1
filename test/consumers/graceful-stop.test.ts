import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { storedEventRows } from '../support/sqlite-statements.js';
import { afterEach, describe, expect, it } from 'vitest';

/** One line the child printed (see graceful-stop-child.ts). */
interface Line {
  readonly yielded?: number;
  readonly type?: string;
  readonly closing?: boolean;
  readonly handling?: string;
  readonly handled?: string;
  readonly closed?: boolean;
  readonly ended?: boolean;
  readonly error?: string;
  readonly ready?: boolean;
}

const childPath = join(import.meta.dirname, 'graceful-stop-child.ts');
const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** Run the child on `dbPath`; SIGTERM it once `stop(lines)` says so. Resolves its lines once it exited by itself. */
function runChild(
  dbPath: string,
  sessions: number,
  stop: (lines: readonly Line[]) => boolean,
): Promise<Line[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', childPath, dbPath, String(sessions)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Line[] = [];
  const log: string[] = [];
  let stopped = false;
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => log.push(chunk));
  createInterface({ input: child.stdout }).on('line', (text) => {
    lines.push(JSON.parse(text) as Line);
    if (!stopped && stop(lines)) {
      stopped = true;
      child.kill('SIGTERM');
    }
  });
  return new Promise((resolve, reject) => {
    child.once('close', (code, signal) => {
      if (code === 0) resolve(lines);
      else reject(new Error(`the child exited with ${code ?? signal}: ${log.join('')}`));
    });
  });
}

/** The block ids recorded in the ledger at `dbPath`, and the last cursor. */
function recordedBlocks(dbPath: string): { blocks: string[]; last: number } {
  const database = new Database(dbPath, { readonly: true });
  const rows = storedEventRows(database).filter((row) => row.type === 'assistant.block');
  const { last } = database.prepare('SELECT max(cursor) AS last FROM events').get() as { last: number };
  database.close();
  const blocks = rows.map((row) => {
    const body = JSON.parse(row.body) as { blockId?: string; index: number };
    return body.blockId ?? `${row.run_id}:${body.index}`;
  });
  return { blocks, last };
}

describe('a durable consumer loop stopped with SIGTERM (runtime.close())', () => {
  it('handles every block exactly once across the stop and the restart, and gets no event once close began', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'agentlanes-graceful-stop-'));
    directories.push(directory);
    const dbPath = join(directory, 'ledger.db');

    // Stopped while it "sends" its second block, with three runs still streaming.
    const first = await runChild(
      dbPath,
      3,
      (lines) => lines.filter((line) => line.handling !== undefined).length === 2,
    );
    const closingAt = first.findIndex((line) => line.closing === true && line.yielded === undefined);
    expect(closingAt).toBeGreaterThan(0);
    const afterClose = first.slice(closingAt).filter((line) => line.yielded !== undefined);
    expect(afterClose).toEqual([]);
    expect(first.some((line) => line.closed === true)).toBe(true);
    expect(first.some((line) => line.error !== undefined)).toBe(false);
    // The block being sent when SIGTERM came was finished.
    const handledFirst = first.flatMap((line) => (line.handled === undefined ? [] : [line.handled]));
    expect(handledFirst.length).toBe(2);

    // Restarted on the same file: it sends the blocks it had not sent, and none again.
    const { blocks, last } = recordedBlocks(dbPath);
    expect(blocks.length).toBeGreaterThan(handledFirst.length);
    const second = await runChild(
      dbPath,
      0,
      (lines) =>
        lines.some(
          (line) => line.yielded !== undefined && line.yielded >= last && line.handling === undefined,
        ) &&
        lines.filter((line) => line.handling !== undefined).length ===
          lines.filter((line) => line.handled !== undefined).length,
    );
    const handledSecond = second.flatMap((line) => (line.handled === undefined ? [] : [line.handled]));
    expect([...handledFirst, ...handledSecond].sort()).toEqual([...blocks].sort());
  }, 60_000);
});
