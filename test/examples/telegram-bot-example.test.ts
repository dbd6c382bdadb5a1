import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const example = join(root, 'examples/telegram-bot.ts');
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href;

const children: ChildProcess[] = [];
const folders: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** The example as a child process in a temporary folder (its ledger file goes there), pointed at `apiRoot`. */
function startExample(apiRoot: string) {
  const folder = mkdtempSync(join(tmpdir(), 'agentlanes-telegram-example-'));
  folders.push(folder);
  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    TELEGRAM_BOT_TOKEN: '123:abc',
    TELEGRAM_API_ROOT: apiRoot,
    // The repository's tsconfig maps `agentlanes` to the sources, so the example runs without a build.
    TSX_TSCONFIG_PATH: join(root, 'tsconfig.json'),
  };
  delete environment['OPENAI_API_KEY'];
  const child = spawn(process.execPath, ['--import', tsx, example], {
    cwd: folder,
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: string[] = [];
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const reader = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  reader.on('line', (line) => lines.push(line));
  /** The first line of its output that matches `pattern`, once it is printed. */
  const sawLine = (pattern: RegExp): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = lines.find((line) => pattern.test(line));
        if (found !== undefined) resolve(found);
      };
      check();
      reader.on('line', check);
      void exited.then(({ code }) => reject(new Error(`the example exited (code ${code}): ${stderr}`)));
    });
  return { child, exited, sawLine, stderr: () => stderr };
}

describe('examples/telegram-bot.ts', () => {
  it(
    'says it waits for the Bot API and exits cleanly on SIGINT when the Bot API is unreachable',
    { timeout: 120_000 },
    async () => {
      const port = await closedPort();
      const running = startExample(`http://127.0.0.1:${port}`);
      const waiting = await running.sawLine(/Bot API not reachable/);
      expect(waiting).toMatch(/^Bot API not reachable \(attempt 1: .+\); retrying in 1 s$/);
      running.child.kill('SIGINT');
      expect(await running.exited).toEqual({ code: 0, signal: null });
      expect(running.stderr()).not.toMatch(/Aborted delay|\n\s+at /);
      expect(running.stderr()).toBe('');
    },
  );
});
