import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';

export const root = join(import.meta.dirname, '..', '..');

/** One fenced block of the README: its language tag and its text. */
export interface ReadmeBlock {
  readonly lang: string;
  readonly code: string;
}

/** Every fenced block of the README, in order. */
export function readmeBlocks(): ReadmeBlock[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  return [...readme.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({
    lang: match[1] as string,
    code: match[2] as string,
  }));
}

/** The one README block that contains `marker`; throws when none or several do. */
export function blockWith(marker: string): ReadmeBlock {
  const found = readmeBlocks().filter((block) => block.code.includes(marker));
  if (found.length !== 1) throw new Error(`${found.length} README blocks contain ${JSON.stringify(marker)}`);
  return found[0] as ReadmeBlock;
}

/**
 * A temporary directory a block runs in as its working directory (its ledger files land there): an ES module
 * package whose tsconfig maps the package's names to the sources, as vitest's aliases do, with the repository's
 * node_modules linked in.
 */
export function blockDirectory(): { readonly dir: string; readonly remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'agentlanes-readme-'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  const entry = (path: string): string[] => [join(root, 'src', path)];
  const paths = {
    agentlanes: entry('index.ts'),
    'agentlanes/testing': entry('testing/index.ts'),
    'agentlanes/server': entry('server/index.ts'),
    'agentlanes/grammy': entry('adapters/grammy/index.ts'),
    'agentlanes/chat-sdk': entry('adapters/chat-sdk/index.ts'),
    'agentlanes/openai': entry('providers/openai/index.ts'),
    'agentlanes/anthropic': entry('providers/anthropic/index.ts'),
    'agentlanes/ai-sdk': entry('providers/ai-sdk/index.ts'),
    'agentlanes/otel': entry('telemetry/index.ts'),
    'agentlanes/mcp': entry('tools/mcp/index.ts'),
    'agentlanes/ledger': entry('public/ledger.ts'),
    'agentlanes/providers': entry('public/providers.ts'),
    'agentlanes/plans': entry('public/plans.ts'),
    'agentlanes/attachments': entry('public/attachments.ts'),
    'agentlanes/authority': entry('public/authority.ts'),
    'agentlanes/events': entry('public/events.ts'),
    'agentlanes/queue': entry('public/queue.ts'),
    'agentlanes/clock': entry('public/clock.ts'),
  };
  const compilerOptions = { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', paths };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions }));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A block running in a child process: its JSON lines as they come, its stdin, its end. */
export interface RunningBlock {
  readonly child: ChildProcess;
  /** Every JSON line printed so far. */
  readonly records: Record<string, unknown>[];
  /** Resolves with the first record (from the start) that `matches`; rejects if the process ends first. */
  waitFor(matches: (record: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** Write one JSON line to its stdin. */
  send(value: unknown): void;
  /** Resolves once it exited: its exit code (null when killed) and what it printed on stderr. */
  readonly exited: Promise<{ readonly code: number | null; readonly stderr: string }>;
}

/**
 * Run `code` (a README block between a prologue and an epilogue) as a module in `dir`, after the harness that
 * provides the reader's own names (`bot`, `myProvider`, …). `env` adds variables.
 */
export function runBlock(
  dir: string,
  name: string,
  parts: { readonly prologue?: string; readonly code: string; readonly epilogue?: string },
  env: Record<string, string> = {},
): RunningBlock {
  const harness = join(root, 'test', 'readme', 'harness.ts');
  const source = [
    `import * as readme from ${JSON.stringify(harness)};`,
    'import assert from "node:assert/strict";',
    parts.prologue ?? '',
    parts.code,
    parts.epilogue ?? '',
    'void readme; void assert;',
  ].join('\n');
  const file = join(dir, `${name}.ts`);
  writeFileSync(file, source);
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const records: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let stdout = '';
  let stderr = '';
  let ended = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    const lines = stdout.split('\n');
    stdout = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('{')) records.push(JSON.parse(line) as Record<string, unknown>);
    }
    waiters.forEach((wake) => wake());
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('close', (code) => {
      ended = true;
      waiters.forEach((wake) => wake());
      resolve({ code, stderr });
    }),
  );
  const waitFor = (matches: (record: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = records.find(matches);
        if (found !== undefined || ended) waiters.delete(check);
        if (found !== undefined) resolve(found);
        else if (ended) reject(new Error(`${name} ended first: ${JSON.stringify(records)}\n${stderr}`));
      };
      waiters.add(check);
      check();
    });
  const send = (value: unknown): void => void child.stdin.write(`${JSON.stringify(value)}\n`);
  return { child, records, waitFor, send, exited };
}

/** A TCP port free on loopback a moment ago, for a block that names a fixed port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** The commands of a shell block: continued lines joined, comments and blank lines left out. */
export function shellCommands(block: string): string[] {
  return block
    .replaceAll('\\\n', ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/**
 * Run a shell block's commands one after another with bash, as a reader would paste them: what each printed,
 * in order. `NAME=$(…)` sets NAME for the commands after it (its output is the value). A command that follows a
 * stream (`curl -N`) is stopped once its output contains `until`.
 */
export async function runShell(block: string, env: Record<string, string>, until: string): Promise<string[]> {
  const variables: Record<string, string> = { ...env };
  const outputs: string[] = [];
  for (const command of shellCommands(block)) {
    const assigned = /^(\w+)=\$\(/.exec(command)?.[1];
    const script = assigned === undefined ? command : `${command}\nprintf '%s' "$${assigned}"`;
    const output = await bash(script, variables, command.includes('curl -N') ? until : undefined);
    if (assigned !== undefined) variables[assigned] = output;
    outputs.push(output);
  }
  return outputs;
}

function bash(script: string, env: Record<string, string>, until: string | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: stopping a stream stops the curl that bash started too.
      detached: true,
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (until === undefined || !output.includes(until) || child.pid === undefined) return;
      process.kill(-child.pid);
      resolve(output);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0 || until !== undefined) resolve(output);
      else reject(new Error(`bash exited ${code}: ${script}\n${output}`));
    });
  });
}
