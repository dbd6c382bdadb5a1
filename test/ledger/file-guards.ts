// Helpers for the ledger-file tests: temporary directories, a holder in another process, read-only files.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const children: ChildProcess[] = [];
const dirs: string[] = [];
const frozen: string[] = [];

/** A fresh temporary directory, removed by `cleanUp`. */
export function tempDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentlanes-files-'));
  dirs.push(dir);
  return dir;
}

/** Make every frozen path writable again. */
export function thawAll(): void {
  for (const path of frozen.splice(0)) thaw(path);
}

/** Kill the holders, make frozen paths writable again, remove the directories. */
export function cleanUp(): void {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  thawAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

const isRoot = process.getuid?.() === 0;

/**
 * Make `path` (a file or a directory) unwritable for this process. Root ignores file modes, so as root the
 * immutable attribute is set instead (chattr +i): then even root cannot write, truncate or create in it.
 */
export function freeze(path: string): void {
  frozen.push(path);
  if (isRoot) execFileSync('chattr', ['+i', path]);
  else chmodSync(path, 0o555);
}

function thaw(path: string): void {
  if (isRoot) execFileSync('chattr', ['-i', path]);
  else chmodSync(path, 0o755);
}

/** Open the ledger at `path` for writing in a child process (hold-ledger.ts); resolves once it holds it. */
export function holdInAnotherProcess(path: string): Promise<ChildProcess> {
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

/** What `open` threw (undefined when it did not throw). */
export function thrownBy(open: () => unknown): unknown {
  try {
    open();
  } catch (error) {
    return error;
  }
  return undefined;
}
