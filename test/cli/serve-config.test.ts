import { spawn } from 'node:child_process';
import { once, EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { runServeCommand, wildcardLines } from '../../src/cli/serve-command.js';
import { isRuntimeError } from '../../src/core/errors.js';
import { readEvents, sseMessages } from '../server/server-harness.js';
import { captureOutput } from './captured-output.js';

const root = join(import.meta.dirname, '..', '..');
const sampleConfig = join(root, 'examples', 'agentlanes.config.ts');
const token = 'serve-config-token-0123456789';
const directories: string[] = [];

afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

function temporaryDirectory(parent = tmpdir()): string {
  const directory = mkdtempSync(join(parent, 'agentlanes-serve-config-'));
  directories.push(directory);
  return directory;
}

/**
 * The CLI as JavaScript, the way `npm run build` ships it, so Node runs it with no TypeScript loader (the case
 * that failed: vitest and `--import tsx` load any `.ts` by themselves). Bundled into node_modules/.cache, so the
 * packages it leaves out resolve from the repository's node_modules.
 */
async function bundleCli(): Promise<string> {
  const cache = join(root, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const outfile = join(temporaryDirectory(cache), 'cli', 'bin.mjs');
  await build({
    entryPoints: [join(root, 'src', 'cli', 'bin.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'error',
  });
  return outfile;
}

/** Headers of a request with the served token. */
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

/** Send one message to the served runtime and resolve the run's text once it ended. */
async function answerTo(url: string, text: string): Promise<string | undefined> {
  const events = sseMessages(await fetch(`${url}/v1/sessions/web:1/events`, { headers }));
  const sent = await fetch(`${url}/v1/sessions/web:1/messages`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ id: 'm-1', text }),
  });
  expect(sent.status).toBe(202);
  await readEvents(events, (event) => event.type === 'run.ended');
  await events.return?.();
  const runs = (await (await fetch(`${url}/v1/sessions/web:1/runs`, { headers })).json()) as {
    runs: { text?: string }[];
  };
  return runs.runs[0]?.text;
}

describe('agentlanes serve --config', () => {
  it('serves the sample TypeScript config from plain Node when the CLI runs as built JavaScript', async () => {
    const bin = await bundleCli();
    const environment = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !name.startsWith('VITEST') && name !== 'NODE_OPTIONS' && name !== 'OPENAI_API_KEY',
      ),
    );
    const child = spawn(process.execPath, [bin, 'serve', '--config', sampleConfig, '--port', '0'], {
      cwd: root,
      env: {
        ...environment,
        AGENTLANES_TOKENS: token,
        AGENTLANES_DB: join(temporaryDirectory(), 'served.db'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, 'exit');
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const found = /serving on (http:\/\/\S+)/.exec(stdout);
        if (found?.[1] !== undefined) resolve(found[1]);
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });

    expect((await fetch(`${url}/v1/sessions`)).status).toBe(401);
    expect(await answerTo(url, 'hello')).toBe('You said: hello (set OPENAI_API_KEY for real answers)');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  }, 120_000);

  it('serves a .mjs config and prints a loopback URL that works when the host is 0.0.0.0', async () => {
    const directory = temporaryDirectory();
    const config = join(directory, 'agentlanes.config.mjs');
    const testing = join(root, 'src', 'testing', 'index.ts');
    writeFileSync(
      config,
      [
        `import { scriptedModel } from ${JSON.stringify(testing)};`,
        `export default {`,
        `  ledger: { path: ${JSON.stringify(join(directory, 'bot.db'))} },`,
        `  providers: { scripted: scriptedModel([{ text: 'from mjs' }]) },`,
        `  model: { provider: 'scripted', model: 'm' },`,
        `};`,
        `export const server = { auth: { tokens: [{ token: ${JSON.stringify(token)} }] } };`,
      ].join('\n'),
    );
    const lines: string[] = [];
    let listening: () => void = () => {};
    const announced = new Promise<void>((resolve) => (listening = resolve));
    const output = {
      write(text: string) {
        lines.push(...text.split('\n').filter((line) => line !== ''));
        if (text.includes('listening on all interfaces')) listening();
        return true;
      },
    };
    const signals = new EventEmitter();
    const served = runServeCommand(
      { config, port: 0, host: '0.0.0.0' },
      { output, errors: captureOutput(), signals: signals },
    );
    await Promise.race([
      announced,
      served.then((code) => {
        throw new Error(`serve ended (${code}) before it listened`);
      }),
    ]);

    const [serving, wildcard] = lines;
    const url = /serving on (http:\/\/\S+)/.exec(serving ?? '')?.[1] ?? '';
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const port = new URL(url).port;
    expect(wildcard).toMatch(
      new RegExp(`^agentlanes: listening on all interfaces \\(0\\.0\\.0\\.0:${port}\\)`),
    );
    expect(await answerTo(url, 'hi')).toBe('from mjs');
    signals.emit('SIGTERM');
    expect(await served).toBe(0);
  });

  it('refuses a config path that does not exist, naming the sample config', async () => {
    const error = await runServeCommand(
      { config: join(temporaryDirectory(), 'missing.config.ts'), port: 0, host: '127.0.0.1' },
      { output: captureOutput(), errors: captureOutput() },
    ).catch((caught: unknown) => caught);
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toContain('no such file (examples/agentlanes.config.ts');
  });
});

describe('wildcardLines', () => {
  const interfaces = {
    lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true }],
    eth0: [
      { address: '10.1.2.3', family: 'IPv4', internal: false },
      { address: 'fe80::1', family: 'IPv6', internal: false },
    ],
  } as unknown as Parameters<typeof wildcardLines>[2];

  it('names the external addresses when the host binds every interface', () => {
    expect(wildcardLines('0.0.0.0', 8787, interfaces)).toEqual([
      'listening on all interfaces (0.0.0.0:8787); from other machines: http://10.1.2.3:8787',
    ]);
  });

  it('says nothing more when the host is one address', () => {
    expect(wildcardLines('127.0.0.1', 8787, interfaces)).toEqual([]);
  });

  it('points at the machine address when it has no external interface', () => {
    expect(wildcardLines('::', 80, {})).toEqual([
      "listening on all interfaces ([::]:80); from other machines: this machine's address, port 80",
    ]);
  });
});
