// A real full filesystem under the SQLite ledger (issue 22.1): a tmpfs mounted in a temporary directory, filled by
// a filler file while runs stream, so the ledger's own writes fail with SQLITE_FULL from the kernel's ENOSPC. It
// needs root (mount); CI runs as root. The classifier test below runs everywhere.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { storedEventRows } from '../support/sqlite-statements.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteLedger, isRuntimeError, type RuntimeEvent } from 'agentlanes';
import {
  advance,
  advanceUntil,
  answersPerPrompt,
  isRawSqliteError,
  ofType,
  openFaultRuntime,
  type Witness,
} from '../support/disk-fault.js';
import { translateFileError } from '../../src/ledger/sqlite/connection.js';
import { isStorageFault } from '../../src/actors/ledger-health.js';

const isRoot = process.getuid?.() === 0;

/** A real SqliteError(SQLITE_FULL) from better-sqlite3: a database capped at a few pages, written past its cap. */
function realFullError(): unknown {
  const db = new Database(':memory:');
  try {
    db.pragma('max_page_count = 4');
    db.exec('CREATE TABLE filler (data BLOB)');
    const insert = db.prepare('INSERT INTO filler (data) VALUES (?)');
    for (let row = 0; row < 100; row++) insert.run(Buffer.alloc(4096));
  } catch (error) {
    return error;
  } finally {
    db.close();
  }
  return undefined;
}

describe('isStorageFault', () => {
  it('classifies a real SQLITE_FULL from better-sqlite3 as ledger_unavailable when the database is full', () => {
    const error = realFullError();
    expect(error).toMatchObject({ name: 'SqliteError', code: 'SQLITE_FULL' });
    expect(isStorageFault(error)).toBe(true);
    const coded = translateFileError(error, '/somewhere/ledger.db');
    expect(isRuntimeError(coded, 'ledger_unavailable')).toBe(true);
    expect(coded.cause).toBe(error);
    expect(isStorageFault(coded)).toBe(true);
  });
});

/** Write `path` until the filesystem has no space left (ENOSPC); the bytes written. */
function fillUntilFull(path: string): number {
  const descriptor = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  let written = 0;
  try {
    for (;;) written += writeSync(descriptor, chunk);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(descriptor);
  }
  return written;
}

/** The text each run streamed live (its `assistant.delta` events, joined). */
function liveText(events: readonly RuntimeEvent[]): Map<string, string> {
  const texts = new Map<string, string>();
  for (const event of events) {
    if (event.type !== 'assistant.delta' || event.runId === undefined) continue;
    texts.set(event.runId, (texts.get(event.runId) ?? '') + event.delta);
  }
  return texts;
}

/** The cursor and type of every event row in the ledger file (read in its own read-only connection). */
function recordedEvents(path: string): Map<number, string> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const rows = storedEventRows(db);
    return new Map(rows.map((row) => [row.cursor, row.type]));
  } finally {
    db.close();
  }
}

describe.runIf(isRoot)('createRuntime (a SQLite ledger on a real filesystem that fills up)', () => {
  // Everything these tests create lives under `base`: the tmpfs is mounted on `base/disk`, nowhere else.
  let base = '';
  let disk = '';
  let mounted = false;

  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'agentlanes-full-disk-'));
    disk = join(base, 'disk');
    mkdirSync(disk);
    // Room for the ledger and its write-ahead log (checkpointed at about 4 MB): only the filler fills it.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', disk]);
    mounted = true;
  });

  afterAll(() => {
    if (mounted) {
      execFileSync('umount', ['-l', disk]);
      mounted = false;
    }
    // Only once the mount is gone: then `base` holds what these tests created outside the tmpfs and nothing else.
    if (base !== '') rmSync(base, { recursive: true, force: true });
  });

  /**
   * Ten sessions stream; then, `faults` times: the filesystem is filled while runs stream until the ledger's
   * commits fail (SQLITE_FULL), held full for 3 s, and the filler deleted. Then every invariant of issue 22.1 is
   * checked, and a runtime reopened on the same file runs nothing again.
   */
  async function fillWhileStreaming(label: string, faults: number): Promise<void> {
    const directory = join(disk, label);
    mkdirSync(directory);
    const path = join(directory, 'ledger.db');
    const filler = join(directory, 'filler');
    const ledger = createSqliteLedger({ path });
    const witness: Witness = { executed: [], errors: [] };
    const workspace = join(base, `${label}-workspace`);
    const { runtime, clock, model } = openFaultRuntime(ledger, witness, 10_000, {
      words: 40,
      toolMs: 300,
      workspace,
    });
    const events: RuntimeEvent[] = [];
    const stream = (async () => {
      for await (const event of runtime.events()) events.push(event);
    })();
    let closed = false;
    try {
      const keys = Array.from({ length: 10 }, (_, index) => `chat:${index}`);
      const acknowledged: string[] = [];
      const sendRound = async (round: number) => {
        for (const [index, key] of keys.entries()) {
          const tool = (index + round) % 3 === 0 ? 'tool ' : '';
          for (const part of ['a', 'b']) {
            const text = `${tool}round ${round} ${part} ${index}`;
            await runtime.session(key).send({ id: `${key}-${round}-${part}`, text });
            acknowledged.push(text);
          }
        }
      };
      for (let fault = 1; fault <= faults; fault++) {
        await sendRound(fault);
        await advance(clock, 100);
        expect(fillUntilFull(filler)).toBeGreaterThan(0);
        // The streaming runs go on writing until a commit needs a page the filesystem no longer has.
        const reported = () =>
          witness.errors.filter((error) => isRuntimeError(error, 'ledger_unavailable')).length;
        await advanceUntil(clock, () => reported() === fault, 5_000);
        expect(reported()).toBe(fault);
        // Not acknowledged: the sender sees the ledger's failure, coded.
        const refused = await runtime
          .session('chat:0')
          .send({ id: `during-${fault}`, text: `sent while full ${fault}` })
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        expect(isRuntimeError(refused, 'ledger_unavailable')).toBe(true);
        await advance(clock, 1_000);
        const calledWhileFull = model.calls;
        await advance(clock, 2_000);
        // Runs stopped at the first write they could not make: nothing reached the model while the disk was full.
        expect(model.calls).toBe(calledWhileFull);
        unlinkSync(filler);
        await advanceUntil(clock, () => ofType(events, 'ledger.available').length === fault, 30_000);
        expect(ofType(events, 'ledger.available')).toHaveLength(fault);
      }
      await advance(clock, 30_000);

      const answers = answersPerPrompt(model.requests);
      for (const prompt of acknowledged) expect([prompt, answers.get(prompt)]).toEqual([prompt, 1]);
      for (let fault = 1; fault <= faults; fault++)
        expect(answers.get(`sent while full ${fault}`)).toBeUndefined();
      expect(witness.executed.length).toBeGreaterThan(0);
      expect(new Set(witness.executed).size).toBe(witness.executed.length);
      const unavailable = witness.errors.filter((error) => isRuntimeError(error, 'ledger_unavailable'));
      expect(unavailable).toHaveLength(faults);
      for (const report of unavailable) {
        // The kernel's ENOSPC reached SQLite as SQLITE_FULL, and the report names it (and no path).
        expect((report as Error).message).toContain('SQLITE_FULL');
        expect((report as Error).message).not.toContain(directory);
      }
      expect(witness.errors.filter(isRawSqliteError)).toEqual([]);
      expect(witness.errors).toHaveLength(faults);
      expect(ofType(events, 'ledger.unavailable')).toHaveLength(faults);
      expect(ofType(events, 'ledger.available')).toHaveLength(faults);
      expect(await ledger.listOpenRuns()).toEqual([]);
      expect(await ledger.listSessionsWithPending()).toEqual([]);
      for (const key of keys)
        expect(runtime.session(key).status()).toMatchObject({ state: 'idle', queued: 0 });
      // No text streamed past what was recorded: each run's live text is its text in the ledger.
      const texts = liveText(events);
      expect(texts.size).toBeGreaterThan(0);
      for (const [runId, text] of texts) expect([runId, await ledger.runText(runId)]).toEqual([runId, text]);

      const closing = runtime.close();
      await clock.runAll();
      await closing;
      await stream;
      await ledger.close();
      closed = true;

      // Every event delivered live is in the ledger under its cursor (deltas are coalesced into fewer rows), but
      // the ledger.unavailable notices, which the full disk could not take.
      const recorded = recordedEvents(path);
      const live = events.filter((event) => !['assistant.delta', 'ledger.unavailable'].includes(event.type));
      for (const event of live)
        expect([event.cursor, recorded.get(event.cursor)]).toEqual([event.cursor, event.type]);

      const reopened = openFaultRuntime(createSqliteLedger({ path }), witness, 1_000_000, {
        words: 40,
        toolMs: 300,
        workspace,
      });
      try {
        // Startup recovery runs on the first advance: whatever it would run again would reach the model here.
        await advance(reopened.clock, 5_000);
        expect(reopened.model.calls).toBe(0);
        expect(new Set(witness.executed).size).toBe(witness.executed.length);
        expect(witness.errors).toHaveLength(faults);
      } finally {
        const closingAgain = reopened.runtime.close();
        await reopened.clock.runAll();
        await closingAgain;
      }
    } finally {
      // Space again, so the ledger can close (and its lock be released) even when an assertion failed.
      rmSync(filler, { force: true });
      if (!closed) {
        const closing = runtime.close().catch(() => undefined);
        await clock.runAll();
        await closing;
        await ledger.close().catch(() => undefined);
      }
      rmSync(directory, { recursive: true, force: true });
    }
  }

  it('runs every acknowledged message once and no tool twice when the disk fills while runs stream', async () => {
    await fillWhileStreaming('once', 1);
  });

  it('reports each fault once and still runs nothing twice when the disk fills again after recovering', async () => {
    await fillWhileStreaming('twice', 2);
  });
});
