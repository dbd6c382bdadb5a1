import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';
import { recordHistory } from './recorded-history.js';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const t0 = 1_700_000_000_000;

/** Run the CLI from source in a real child process; resolves its exit code and output. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], {
      cwd: root,
      env: { ...process.env, NO_COLOR: '' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('agentlanes (bin)', () => {
  it('lists sessions and replays one from a SQLite file a runtime wrote when run as a process', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'agentlanes-cli-')), 'bot.db');
    const ledger = createSqliteLedger({ path });
    await (await recordHistory(ledger)).finish();
    await ledger.close();

    const sessions = await cli(['sessions', '--db', path]);
    expect(sessions).toMatchObject({ code: 0, stderr: '' });
    const closedAt = new Date(t0 + 5_035).toISOString();
    // Carol's hanging run was ended when the runtime closed: the latest activity, so her row comes first.
    expect(sessions.stdout.split('\n').slice(0, 2)).toEqual([
      'key             state   runs  queued  last activity',
      `telegram:carol  queued     1       1  ${closedAt}`,
    ]);
    // How many runs alice had depends on commit timing (on SQLite send() resolves after the commit, and a
    // zero-latency run may end before the next message arrives): the row must show what the file holds.
    const reader = createSqliteLedger({ path, readonly: true });
    const aliceRuns = (await reader.listRuns('telegram:alice')).length;
    await reader.close();
    expect([3, 4]).toContain(aliceRuns);
    expect(sessions.stdout).toContain(
      `telegram:alice  idle       ${aliceRuns}       0  ${new Date(t0 + 2_105).toISOString()}\n`,
    );

    const replay = await cli(['replay', 'telegram:bob', '--db', path]);
    expect(replay).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        '  +0.000s  message received   b1  collect -> started  "stop me"',
        `  +0.000s  run started        run_${aliceRuns + 1}  messages b1  scripted/m`,
        `  +0.500s  run ended          run_${aliceRuns + 1}  aborted  cancelled  0.500s  tokens 0 in / 0 out`,
        '',
      ].join('\n'),
    });

    const unknown = await cli(['replay', 'telegram:nobody', '--db', path]);
    expect(unknown).toEqual({
      code: 1,
      stdout: '',
      stderr: 'agentlanes: no events for session "telegram:nobody"\n',
    });
    // Three child processes that each load tsx: a budget against a hang, generous for a loaded machine.
  }, 120_000);
});
