import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { RuntimeError, isRuntimeError } from '../core/index.js';
import type { Ledger } from '../ledger/index.js';
import { runDemo, type DemoOptions } from './demo/run-demo.js';
import { openLedger, type LedgerOpener } from './open-ledger.js';
import { runReplayCommand } from './replay-command.js';
import { runSessionsCommand } from './sessions-command.js';
import { serveUsage } from './serve-usage.js';
import type { CommandIo } from './terminal-style.js';

const demoUsage = `  demo                 a simulated chat channel on the scripted model, with a live view and a closing table
                       --users N (24)  --seed N (7: the same seed gives the same run)  --token-delay MS (25)
                       --db PATH (a fresh file in the temp folder; an existing agentlanes ledger there is
                       replaced, any other file is left alone)
`;
const sessionsUsage = `  sessions             every session in the ledger: key, state, runs, queued, last activity
                       --db PATH (./agentlanes.db)
`;
const replayUsage = `  replay <sessionKey>  the session's recorded events as a timeline
                       --db PATH (./agentlanes.db)
`;

const usage = `usage: agentlanes <command> [options]

commands:
${demoUsage}${sessionsUsage}${replayUsage}${serveUsage}
  agentlanes <command> --help   this text for one command
  agentlanes --version          the installed version
`;

/** The help text of one command; `operands` are its positional arguments (`<sessionKey>`). */
function commandUsage(command: string, lines: string, operands = ''): string {
  return `usage: agentlanes ${command}${operands === '' ? '' : ` ${operands}`} [options]\n\n${lines}`;
}

/** The version in the package.json next to the build (../../package.json from src/cli and dist/cli alike). */
function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

const defaultDatabase = './agentlanes.db';

/** What `main` reads and writes; tests replace any of it. */
export interface MainIo extends CommandIo {
  /** @default openLedger (SQLite, read-only) */
  readonly openLedger?: LedgerOpener;
  /** @default runDemo */
  readonly runDemo?: (options: DemoOptions) => Promise<number>;
}

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new RuntimeError('invalid_input', `--${name} must be a whole number`);
  return parsed;
}

/** True for errors that mean the command line was wrong (parseArgs' errors and our own `invalid_input`). */
function isUsageError(error: unknown): error is Error {
  const code = (error as { code?: unknown } | undefined)?.code;
  return (
    isRuntimeError(error, 'invalid_input') || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))
  );
}

/** The demo's options, or undefined when `--help` was asked for (the help is written). */
function demoOptions(args: string[], io: MainIo): DemoOptions | undefined {
  const { values } = parseArgs({
    args,
    options: {
      users: { type: 'string' },
      seed: { type: 'string' },
      'token-delay': { type: 'string' },
      db: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help === true) {
    (io.output ?? process.stdout).write(commandUsage('demo', demoUsage));
    return undefined;
  }
  const users = positiveInt('users', values.users, 24);
  if (users < 1) throw new RuntimeError('invalid_input', '--users must be at least 1');
  return {
    users,
    seed: positiveInt('seed', values.seed, 7),
    tokenDelayMs: positiveInt('token-delay', values['token-delay'], 25),
    ...(values.db === undefined ? {} : { path: values.db }),
    output: io.output ?? process.stdout,
  };
}

async function demo(args: string[], io: MainIo): Promise<number> {
  const options = demoOptions(args, io);
  if (options === undefined) return 0;
  const lost = await (io.runDemo ?? runDemo)(options);
  return lost === 0 ? 0 : 1;
}

/**
 * Parse `[--db path]` and the positionals of a ledger command (checked before anything is opened, so a wrong
 * command line touches no file), then open the ledger, run, and close it. `--help` writes the command's help.
 */
async function withLedger<T>(
  args: string[],
  io: MainIo,
  help: string,
  readPositionals: (positionals: readonly string[]) => T,
  run: (ledger: Ledger, value: T) => Promise<number>,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { db: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: true,
  });
  if (values.help === true) {
    (io.output ?? process.stdout).write(help);
    return 0;
  }
  const value = readPositionals(positionals);
  const ledger = await (io.openLedger ?? openLedger)(values.db ?? defaultDatabase);
  try {
    return await run(ledger, value);
  } finally {
    await ledger.close();
  }
}

function noPositionals(positionals: readonly string[]): void {
  if (positionals.length > 0)
    throw new RuntimeError('invalid_input', `unexpected argument "${positionals[0]}"`);
}

function sessionKeyOf(positionals: readonly string[]): string {
  const [sessionKey, ...extra] = positionals;
  if (sessionKey === undefined || sessionKey === '')
    throw new RuntimeError('invalid_input', 'replay needs a session key');
  noPositionals(extra);
  return sessionKey;
}

/** Run the CLI with `argv` (without node and the script); resolves with the exit code. */
export async function main(argv: readonly string[], io: MainIo = {}): Promise<number> {
  const [command, ...rest] = argv;
  const output = io.output ?? process.stdout;
  const errors = io.errors ?? process.stderr;
  const commandIo: CommandIo = { ...io, output, errors };
  try {
    switch (command) {
      case 'demo':
        return await demo(rest, { ...io, output });
      case 'sessions':
        return await withLedger(rest, io, commandUsage('sessions', sessionsUsage), noPositionals, (ledger) =>
          runSessionsCommand(ledger, commandIo),
        );
      case 'replay':
        return await withLedger(
          rest,
          io,
          commandUsage('replay', replayUsage, '<sessionKey>'),
          sessionKeyOf,
          (ledger, key) => runReplayCommand(ledger, key, commandIo),
        );
      case 'serve': {
        // Loaded on demand: only `serve` needs Hono and the server.
        const { parseServeArgs, runServeCommand } = await import('./serve-command.js');
        const serveOptions = parseServeArgs(rest, commandIo);
        return serveOptions === undefined ? 0 : await runServeCommand(serveOptions, commandIo);
      }
      case '--version':
      case '-v':
      case 'version':
        output.write(`agentlanes ${packageVersion()}\n`);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        output.write(usage);
        return command === undefined ? 1 : 0;
      default:
        // `command` is whatever the user typed (an open string): anything unlisted is an unknown command.
        errors.write(`agentlanes: unknown command "${command}"\n${usage}`);
        return 1;
    }
  } catch (error) {
    if (isUsageError(error)) {
      errors.write(`agentlanes: ${error.message}\n${usage}`);
      return 1;
    }
    const message = isRuntimeError(error) || error instanceof TypeError ? error.message : String(error);
    errors.write(`agentlanes: ${message}\n`);
    return 1;
  }
}
