import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isRuntimeError } from 'agentlanes';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function holdInAnotherProcess(path: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'hold-ledger.ts'), path],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`holder exited early with ${String(code)}`)));
  });
}

function thrownBy(open: () => unknown): unknown {
  try {
    open();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('createSqliteLedger (one writer per file)', () => {
  it('refuses a second process at once with ledger_locked and opens once the holder was killed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentlanes-lock-'));
    dirs.push(dir);
    const path = join(dir, 'ledger.db');
    const holder = await holdInAnotherProcess(path);

    // Opening is synchronous and the lock is taken without a busy timeout: the refusal comes at once.
    const refused = thrownBy(() => createSqliteLedger({ path }));
    expect(isRuntimeError(refused, 'ledger_locked')).toBe(true);
    expect((refused as Error).message).toContain(path);

    const reader = createSqliteLedger({ path, readonly: true });
    expect((await reader.listMessages('held')).map((record) => record.text)).toEqual([
      'written by the holder',
    ]);
    await reader.close();

    const exited = new Promise((resolve) => holder.once('exit', resolve));
    holder.kill('SIGKILL');
    await exited;
    const after = createSqliteLedger({ path });
    expect((await after.listMessages('held')).map((record) => record.status)).toEqual(['pending']);
    await after.close();
  });
});
