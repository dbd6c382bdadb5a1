import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const directories: string[] = [];

afterAll(async () => {
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

/** A loopback port that refuses connections: a Postgres URL that points at nothing. */
async function closedPort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const address = listener.address();
  await new Promise((resolve) => listener.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no loopback port');
  return address.port;
}

/** PATH without the directories that hold a PostgreSQL server, as on a machine with Node alone. */
function pathWithoutPostgres(): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter(
      (directory) => !['pg_ctl', 'postgres', 'initdb'].some((name) => existsSync(join(directory, name))),
    )
    .join(delimiter);
}

/** Run `command` to its end; its exit code and everything it printed. */
async function run(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; output: string }> {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, output };
}

// The clone holds the repository's last commit: this test pins what a fresh clone of it does, not the work tree.
describe('the Postgres global setup of the test run', () => {
  it('runs the Postgres ledger contract suite on an embedded server when a fresh clone has no Postgres to reach', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'agentlanes-fresh-clone-'));
    directories.push(directory);
    const clone = join(directory, 'agentlanes');
    const clonedFrom = spawnSync(
      'git',
      // A checkout on a detached HEAD (as CI's may be) clones with git's advice on stderr unless it is off.
      [
        '-c',
        'advice.detachedHead=false',
        'clone',
        '--quiet',
        '--depth',
        '1',
        `file://${repositoryRoot}`,
        clone,
      ],
      {
        encoding: 'utf8',
      },
    );
    expect(clonedFrom.stderr).toBe('');
    // The dependencies as `npm ci` would install them, without a download.
    await symlink(join(repositoryRoot, 'node_modules'), join(clone, 'node_modules'), 'dir');
    // A temporary directory like /tmp, which the `postgres` user the server runs as under root can use too.
    await chmod(directory, 0o755);
    const temporary = join(directory, 'tmp');
    await mkdir(temporary);
    await chmod(temporary, 0o1777);
    const environment = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST') && name !== 'NODE_OPTIONS'),
    );
    const port = await closedPort();

    const { code, output } = await run(
      process.execPath,
      [join(clone, 'node_modules/vitest/vitest.mjs'), 'run', 'test/ledger/postgres-ledger.test.ts'],
      {
        cwd: clone,
        env: {
          ...environment,
          AGENTLANES_TEST_POSTGRES: `postgres://postgres@127.0.0.1:${port}/test`,
          PATH: pathWithoutPostgres(),
          TMPDIR: temporary,
          NO_COLOR: '1',
          FORCE_COLOR: '0',
        },
      },
    );

    expect(output).toContain('started an embedded PostgreSQL');
    expect(output).toMatch(/Tests\s+\d+ passed/);
    expect(output).not.toMatch(/\d+ failed/);
    expect(code).toBe(0);
    // The server's directory went with the run.
    expect((await readdir(temporary)).filter((name) => name.startsWith('agentlanes-postgres-'))).toEqual([]);
  }, 300_000);
});
