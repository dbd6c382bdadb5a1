import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const childPath = join(import.meta.dirname, 'child.ts');

/** A line the child wrote on stdout (see child.ts). */
export type ChildLine =
  | { readonly ready: true }
  | {
      readonly ack: string;
      readonly disposition: string;
      readonly runId?: string;
    }
  | { readonly cancel: string; readonly removed: boolean }
  | { readonly failed: string; readonly code: string; readonly message: string }
  | { readonly toolStart: string }
  | { readonly inDoubt: string };

/** A command for the child (see child.ts). */
export type ChildCommand =
  | {
      readonly op: 'send';
      readonly session: string;
      readonly id: string;
      readonly text: string;
      readonly mode: 'followup' | 'collect';
    }
  | { readonly op: 'cancel'; readonly session: string; readonly id: string }
  | { readonly op: 'plan'; readonly session: string; readonly id: string };

/** How the child ended. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A running child: a runtime in its own process on the test's ledger file. */
export interface RuntimeChild<Command = ChildCommand> {
  /** Resolves on `{"ready":true}`; rejects if the child exits first. */
  readonly ready: Promise<void>;
  readonly exited: Promise<ChildExit>;
  readonly process: ChildProcess;
  command(command: Command): void;
  /** SIGKILL, and resolve once the process is gone. */
  kill(): Promise<ChildExit>;
  /** End stdin (the child closes its runtime and exits), and resolve once the process is gone. */
  end(): Promise<ChildExit>;
}

/**
 * Start `child.ts` (or `script`) on `dbPath`. Every stdout line goes to `onLine`; stderr and anything unexpected
 * go to `log` (printed when the test fails).
 */
export function startChild<Line extends object = ChildLine, Command = ChildCommand>(options: {
  dbPath: string;
  seed: number;
  label: string;
  log: string[];
  onLine: (line: Line) => void;
  /** The child script to run. @default test/crash/child.ts */
  script?: string;
  /** Arguments after `<dbPath> <seed>`. @default [] */
  extraArgs?: readonly string[];
}): RuntimeChild<Command> {
  const { dbPath, seed, label, log, onLine, script = childPath, extraArgs = [] } = options;
  const child = spawn(process.execPath, ['--import', 'tsx', script, dbPath, String(seed), ...extraArgs], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<ChildExit>((resolve) => {
    // 'close', not 'exit': every line the child wrote has been read by then.
    child.once('close', (code, signal) => {
      log.push(`[${label}] exited code=${code} signal=${signal}`);
      resolve({ code, signal });
    });
  });
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    void exited.then((exit) =>
      reject(new Error(`child ${label} exited before it was ready: ${JSON.stringify(exit)}`)),
    );
  });
  // Writing to a killed child fails with EPIPE; what it did not read was never acknowledged, which is allowed.
  child.stdin.on('error', (error) => log.push(`[${label}] stdin: ${error.message}`));
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => log.push(`[${label}] ${chunk.trimEnd()}`));
  createInterface({ input: child.stdout }).on('line', (text) => {
    let line: Line;
    try {
      line = JSON.parse(text) as Line;
    } catch {
      log.push(`[${label}] stdout: ${text}`);
      return;
    }
    if ('ready' in line) markReady();
    onLine(line);
  });
  return {
    ready,
    exited,
    process: child,
    command(command) {
      if (child.stdin.writable) child.stdin.write(`${JSON.stringify(command)}\n`);
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      return exited;
    },
    end() {
      child.stdin.end();
      return exited;
    },
  };
}
