import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { RuntimeError } from '../core/errors.js';
import { createRuntime, type RuntimeOptions } from '../runtime/index.js';
import { createServer, type ServerOptions } from '../server/index.js';
import type { CommandIo } from './terminal-style.js';

import { serveUsage } from './serve-usage.js';

/** What `agentlanes serve` was asked for. */
export interface ServeOptions {
  /** The config module: its default export is the runtime options; an optional `server` export the server's. */
  readonly config: string;
  readonly port: number;
  readonly host: string;
}

/** What a config module exports. */
interface ConfigModule {
  readonly default?: RuntimeOptions;
  readonly server?: ServerOptions;
}

/** What `serve` waits on to stop: SIGTERM and SIGINT by default; tests may pass their own. */
export interface StopSignal {
  once(event: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
}

/** True for the error Node raises when it cannot load a `.ts` module by itself. */
function isUnknownExtension(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === 'ERR_UNKNOWN_FILE_EXTENSION';
}

/**
 * Import the config module. A `.ts` module loads as is under a TypeScript-aware Node (tsx, or Node's own type
 * stripping); otherwise tsx's loader is registered when tsx is installed, else the error says what to do.
 */
async function importConfig(path: string): Promise<ConfigModule> {
  const url = pathToFileURL(resolve(path)).href;
  try {
    return (await import(url)) as ConfigModule;
  } catch (error) {
    if (!isUnknownExtension(error)) throw error;
  }
  let register: (() => unknown) | undefined;
  try {
    ({ register } = (await import('tsx/esm/api')) as { register: () => unknown });
  } catch {
    throw new RuntimeError(
      'invalid_input',
      `--config ${path}: a .ts config needs tsx installed (npm i -D tsx), or write it as .mjs`,
    );
  }
  register();
  return (await import(url)) as ConfigModule;
}

/** Load the config's runtime and server options; `invalid_input` when the module has no default export. */
async function loadConfig(path: string): Promise<{ runtime: RuntimeOptions; server: ServerOptions }> {
  const loaded = await importConfig(path);
  if (typeof loaded.default !== 'object' || loaded.default === null) {
    throw new RuntimeError(
      'invalid_input',
      `--config ${path}: the module must default-export the runtime options`,
    );
  }
  return { runtime: loaded.default, server: loaded.server ?? {} };
}

/**
 * Serve a runtime over HTTP until SIGTERM or SIGINT: then stop accepting, end open streams with a final frame,
 * and close the runtime (in-flight runs finish or are checkpointed). Resolves the exit code.
 */
export async function runServeCommand(
  options: ServeOptions,
  io: CommandIo & { readonly signals?: StopSignal },
): Promise<number> {
  const output = io.output ?? process.stdout;
  const config = await loadConfig(options.config);
  const runtime = createRuntime(config.runtime);
  let listening;
  try {
    listening = await createServer(runtime, config.server).listen({ port: options.port, host: options.host });
  } catch (error) {
    await runtime.close();
    throw error;
  }
  output.write(`agentlanes: serving on ${listening.url}\n`);
  const signals = io.signals ?? process;
  const signal = await new Promise<string>((done) => {
    signals.once('SIGTERM', () => done('SIGTERM'));
    signals.once('SIGINT', () => done('SIGINT'));
  });
  output.write(`agentlanes: ${signal}: closing\n`);
  await listening.close();
  await runtime.close();
  output.write('agentlanes: closed\n');
  return 0;
}

/** The help text of `serve`. */

/** Parse `serve`'s arguments; undefined when `--help` was asked for (the help is written). */
export function parseServeArgs(args: string[], io: CommandIo): ServeOptions | undefined {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help === true) {
    (io.output ?? process.stdout).write(`usage: agentlanes serve [options]\n\n${serveUsage}`);
    return undefined;
  }
  const port = Number(values.port ?? '8787');
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new RuntimeError('invalid_input', '--port must be a whole number from 0 to 65535');
  }
  return { config: values.config ?? './agentlanes.config.ts', port, host: values.host ?? '127.0.0.1' };
}
