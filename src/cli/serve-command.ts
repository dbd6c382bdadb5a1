import { existsSync } from 'node:fs';
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { RuntimeError } from '../core/index.js';
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

/** Extensions Node cannot import by itself (before its own type stripping): loaded through tsx. */
const typeScriptExtensions = new Set(['.ts', '.mts', '.cts']);

/** What `tsx/esm/api` exports that the CLI uses. */
type TsImport = (specifier: string, parentUrl: string) => Promise<unknown>;

/**
 * tsx's `tsImport`, loaded only for a TypeScript config. tsx is an optional peer dependency: a `.js` or `.mjs`
 * config, and every other command, run without it.
 */
async function loadTsImport(path: string): Promise<TsImport> {
  try {
    return ((await import('tsx/esm/api')) as { tsImport: TsImport }).tsImport;
  } catch (error) {
    throw new RuntimeError(
      'invalid_input',
      `--config ${path}: a TypeScript config needs tsx: run \`npm install --save-dev tsx\`, or write the config as .mjs`,
      { cause: error },
    );
  }
}

/**
 * Import the config module: `.js` and `.mjs` with Node's own `import()`; `.ts` and `.mts` through tsx's `tsImport`
 * from the start. (Importing a `.ts` URL first and registering tsx after it failed cannot work: Node caches the
 * failed import of that URL, so the second import fails the same way.)
 */
async function importConfig(path: string): Promise<ConfigModule> {
  const absolute = resolve(path);
  if (!existsSync(absolute)) {
    throw new RuntimeError(
      'invalid_input',
      `--config ${path}: no such file (examples/agentlanes.config.ts in the repository is a sample config)`,
    );
  }
  const url = pathToFileURL(absolute).href;
  if (!typeScriptExtensions.has(extname(absolute))) return (await import(url)) as ConfigModule;
  const tsImport = await loadTsImport(path);
  return unwrapCommonJs((await tsImport(url, import.meta.url)) as ConfigModule);
}

/**
 * A `.ts` config outside a `"type": "module"` package is compiled as CommonJS: its namespace's `default` is then
 * the whole `module.exports` (`{ default, server }`), not the options. Take the exports the author wrote.
 */
function unwrapCommonJs(loaded: ConfigModule): ConfigModule {
  const inner = loaded.default as (ConfigModule & Record<string, unknown>) | undefined;
  if (typeof inner === 'object' && inner !== null && 'default' in inner) return inner;
  return loaded;
}

/** Hosts that mean every interface of the machine. */
const wildcardHosts = new Set(['0.0.0.0', '::', '[::]']);

/**
 * What to add to the `serving on` line (a loopback URL, which works on this machine) when `host` binds every
 * interface: that it does, and the URLs other machines reach it at (this machine's external IPv4 addresses).
 */
export function wildcardLines(
  host: string,
  port: number,
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): string[] {
  if (!wildcardHosts.has(host)) return [];
  const external = Object.values(interfaces)
    .flatMap((addresses) => addresses ?? [])
    .filter((address) => address.family === 'IPv4' && !address.internal)
    .map((address) => `http://${address.address}:${port}`);
  const bound = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return [
    `listening on all interfaces (${bound}:${port}); from other machines: ` +
      (external.length === 0 ? `this machine's address, port ${port}` : external.join(', ')),
  ];
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
  let server;
  let listening;
  try {
    server = createServer(runtime, config.server);
    listening = await server.listen({ port: options.port, host: options.host });
  } catch (error) {
    await runtime.close();
    throw error;
  }
  output.write(`agentlanes: serving on ${listening.url}\n`);
  for (const line of wildcardLines(options.host, listening.port)) output.write(`agentlanes: ${line}\n`);
  const signIn = server.signInLink(listening.url);
  if (signIn !== undefined)
    output.write(`agentlanes: dashboard sign-in link (works once, 10 min): ${signIn}\n`);
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
