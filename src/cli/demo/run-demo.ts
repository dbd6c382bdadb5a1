import { seededRandom } from '../../core/index.js';
import { tmpdir, userInfo } from 'node:os';
import { join, relative, sep } from 'node:path';
import { createSqliteLedger } from '../../ledger/index.js';
import type { Runtime } from '../../runtime/index.js';
import { createDemoRuntime } from './demo-runtime.js';
import { closingTable, countEvent, findLost, type DemoCounts } from './demo-report.js';
import { simulateUser, type ChannelLog } from './demo-users.js';
import type { CommandOutput } from '../terminal-style.js';
import { prepareDemoFile } from './demo-file.js';
import { createDemoTicker, type DemoTicker } from './demo-ticker.js';
import { createDemoView, progressLine } from './demo-view.js';
import { createDemoClock, type DemoClock } from './demo-clock.js';
import { watchLedgerActivity } from './ledger-activity.js';

/** Options of the demo. */
export interface DemoOptions {
  /** Simulated chat users. @default 24 */
  readonly users: number;
  /** Seed of the simulation's randomness. @default 7 */
  readonly seed: number;
  /** Milliseconds between streamed tokens. @default 25 */
  readonly tokenDelayMs: number;
  /**
   * The SQLite file the demo records to; an agentlanes ledger there is replaced, any other file is refused.
   * @default agentlanes-demo-<user>.db in the user's temp folder
   */
  readonly path?: string;
  /** Where the live view and the closing table go; a terminal gets the redrawn view. */
  readonly output: CommandOutput & { readonly columns?: number };
  /**
   * Play at the speed of the simulated clock (a live show); otherwise run as fast as the machine allows.
   * @default output.isTTY
   */
  readonly realTime?: boolean;
}

/**
 * The demo's file when none is given: in the user's temp folder, named for the user, so two users of one machine
 * (whose temp folder is often the shared /tmp) never replace each other's record.
 */
export function defaultDemoPath(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // No entry in the user database (a container's arbitrary uid): the uid names the file instead.
    user = String(process.getuid?.() ?? 'user');
  }
  return join(tmpdir(), `agentlanes-demo-${user.replace(/[^A-Za-z0-9._-]/g, '_')}.db`);
}

/** Simulated milliseconds per step of the show (one frame of the live view). */
const stepMs = 50;

/**
 * Advance the simulated clock step by step until `work` settles, drawing a frame after each step (and, in real
 * time, waiting the step out on the host clock).
 */
async function drive<T>(
  clock: DemoClock,
  work: Promise<T>,
  options: { readonly realTime: boolean; readonly frame: () => void },
): Promise<T> {
  let settled = false;
  const watched = work.finally(() => {
    settled = true;
  });
  watched.catch(() => undefined);
  while (!settled) {
    await clock.advance(stepMs);
    options.frame();
    if (options.realTime) await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
  return watched;
}

/** Zeroed counts for the closing table. */
function emptyCounts(): DemoCounts {
  return {
    runs: 0,
    completed: 0,
    steered: 0,
    collected: 0,
    interrupted: 0,
    aborted: 0,
    laneWaits: 0,
    tokens: 0,
    rotations: 0,
    fallbacks: 0,
    cooldowns: 0,
    approvalsRequested: 0,
    approved: 0,
  };
}

/** Re-read the file the demo wrote and check every accepted message against it. */
async function checkRecord(path: string, log: ChannelLog): Promise<string[]> {
  const record = createSqliteLedger({ path, readonly: true });
  try {
    return await findLost(record, log);
  } finally {
    await record.close();
  }
}

/** What the event follower of the demo reads from and writes to. */
interface Following {
  readonly runtime: Runtime;
  readonly clock: DemoClock;
  readonly output: CommandOutput;
  readonly counts: DemoCounts;
  readonly ticker: DemoTicker;
  /** Off a terminal: print the ticker's lines and a progress line per simulated second. */
  readonly plain: boolean;
  /** The simulated operator's approvals, awaited before the simulation ends. */
  readonly approvals: Promise<void>[];
}

/** Count, print and answer the runtime's events (the operator approves each request) until `signal` aborts. */
async function followEvents(following: Following, signal: AbortSignal): Promise<void> {
  const { runtime, clock, output, counts, ticker, plain, approvals } = following;
  let second = 0;
  for await (const event of runtime.events({ signal })) {
    // Off a terminal the log is a fold over the ordered events alone, so one seed prints the same lines.
    if (plain && Math.floor(event.at / 1000) > second) {
      second = Math.floor(event.at / 1000);
      output.write(`${progressLine(counts, second)}\n`);
    }
    countEvent(counts, event);
    const line = ticker.note(event, event.at);
    if (line !== undefined && plain) output.write(`${line}\n`);
    // The simulated operator reads each request for 400 ms, then approves it.
    if (event.type === 'approval.requested') {
      const { sessionKey, toolCallId } = event;
      approvals.push(
        clock.sleep(400).then(() => runtime.session(sessionKey).approve({ toolCallId, decision: 'approve' })),
      );
    }
  }
}

/** Print the waits, the closing table and where the record is. */
function report(output: CommandOutput, path: string, log: ChannelLog, table: string[], lost: string[]): void {
  output.write('\n');
  for (const line of log.waits) output.write(`${line}\n`);
  for (const line of table) output.write(`${line}\n`);
  if (lost.length > 0) output.write(`lost messages: ${lost.join(', ')}\n`);
  output.write(`\nrecorded in ${path}; try: ${cliCommand()} replay demo:user-01 --db ${path}\n`);
}

/**
 * How to run this CLI again from where the user is: `npx agentlanes` once the package is installed as a
 * dependency, else (`npm start` in a clone of the repository, where npx would look for the package on the
 * registry) node and the path of the script that runs now.
 */
export function cliCommand(script: string | undefined = process.argv[1]): string {
  if (script === undefined || script.split(sep).includes('node_modules')) return 'npx agentlanes';
  const path = relative(process.cwd(), script);
  return `node ${path.includes(' ') ? JSON.stringify(path) : path}`;
}

/**
 * `agentlanes demo`: a simulated chat channel on the scripted model — users sending bursts (collect), steering
 * mid-stream, one interrupt, one /stop, one waitForEnd, one refund an operator approves — recorded in a SQLite
 * ledger, with a live view and a closing table whose `lost` is computed by checking every accepted message
 * against the file read back. It runs on a simulated clock, so one seed gives the same show every time.
 * Resolves with the number of lost messages.
 */
export async function runDemo(options: DemoOptions): Promise<number> {
  const { output } = options;
  const random = seededRandom(options.seed);
  const path = options.path ?? defaultDemoPath();
  prepareDemoFile(path);
  const ledger = createSqliteLedger({ path });
  const watched = watchLedgerActivity(ledger);
  // Virtual time that moves only when the demo advances it, and only once the ledger has gone quiet, so one seed
  // replays exactly however fast the machine commits.
  const clock = createDemoClock(() => watched.quiet());
  const runtime = createDemoRuntime({
    clock,
    random,
    ledger: watched.ledger,
    tokenDelayMs: options.tokenDelayMs,
  });
  const counts = emptyCounts();
  const ticker = createDemoTicker();
  const plain = output.isTTY !== true;
  const stopEvents = new AbortController();
  const approvals: Promise<void>[] = [];
  const following = followEvents(
    { runtime, clock, output, counts, ticker, plain, approvals },
    stopEvents.signal,
  );
  const log: ChannelLog = { accepted: new Map(), sent: 0, duplicates: 0, rejected: 0, stops: 0, waits: [] };
  const sessions = Array.from({ length: options.users }, (_, index) =>
    runtime.session(`demo:user-${String(index + 1).padStart(2, '0')}`),
  );
  const view = createDemoView(output);
  const frame = (): void => view.draw({ sessions, counts, elapsedMs: clock.now(), ticker });
  const simulation = async (): Promise<void> => {
    await Promise.all(sessions.map((_, index) => simulateUser(runtime, index, { clock, random, log })));
    // Let every queue drain and every run end.
    while (sessions.some((session) => session.status().state !== 'idle' || session.status().queued > 0)) {
      await clock.sleep(50);
    }
    await Promise.all(approvals);
  };
  await drive(clock, simulation(), { realTime: options.realTime ?? !plain, frame });
  const seconds = clock.now() / 1000;
  view.done();
  await drive(clock, runtime.close(), { realTime: false, frame: () => undefined });
  stopEvents.abort();
  await following;
  await ledger.close();
  // The no-loss check reads the file back: what counts is what is durable.
  const lost = await checkRecord(path, log);
  report(output, path, log, closingTable(counts, log, lost.length, seconds), lost);
  return lost.length;
}
