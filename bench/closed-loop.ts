/**
 * The closed-loop workload every throughput bench drives, the runtime and its floor alike: each session sends a
 * message, waits for its run to end, sends the next. Records throughput, acknowledgement and end-to-end latency.
 */

/** How big the workload is. */
export interface Workload {
  /** Sessions, each one closed loop. */
  sessions: number;
  /** Messages each session sends, one after the other. */
  perSession: number;
}

/**
 * One message of one session: send it, call `acknowledged()` once `send()` resolved, resolve once its run ended.
 * The first argument is the session's index, the second the message's index within the session.
 */
export type SendMessage = (session: number, message: number, acknowledged: () => void) => Promise<void>;

/** What one closed-loop pass measured. */
export interface LoopResult {
  messages: number;
  seconds: number;
  perSecond: number;
  /** send() -> acknowledged, ms, messages after a session's first. */
  acks: number[];
  /** send() -> acknowledged, ms, each session's first message. */
  firstAcks: number[];
  /** send() -> run ended, ms. */
  latencies: number[];
}

/** Run the workload: every session a closed loop, all sessions at once. */
export async function closedLoop(workload: Workload, send: SendMessage, offset = 0): Promise<LoopResult> {
  const acks: number[] = [];
  const firstAcks: number[] = [];
  const latencies: number[] = [];
  async function loop(session: number): Promise<void> {
    for (let message = 0; message < workload.perSession; message++) {
      const sentAt = performance.now();
      const acknowledged = (): void => {
        (message === 0 ? firstAcks : acks).push(performance.now() - sentAt);
      };
      await send(offset + session, message, acknowledged);
      latencies.push(performance.now() - sentAt);
    }
  }
  const started = performance.now();
  await Promise.all(Array.from({ length: workload.sessions }, (_, session) => loop(session)));
  const seconds = (performance.now() - started) / 1000;
  const messages = workload.sessions * workload.perSession;
  return { messages, seconds, perSecond: messages / seconds, acks, firstAcks, latencies };
}

/** The p-th percentile of `values` (sorts them in place). */
export function percentile(values: number[], p: number): number {
  values.sort((a, b) => a - b);
  return values[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? 0;
}

/** "p50 x ms, p99 y ms" of `values`. */
export function p50p99(values: number[], digits = 2): string {
  return `p50 ${percentile(values, 50).toFixed(digits)} ms, p99 ${percentile(values, 99).toFixed(digits)} ms`;
}

/** A number of the workload from argv, or its default. */
export function argument(index: number, fallback: number): number {
  const raw = process.argv[index];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`argument ${index - 1} must be a positive integer`);
  return value;
}

/** "12,345 messages/s" */
export function rate(perSecond: number): string {
  return `${Math.round(perSecond).toLocaleString('en-US')} messages/s`;
}

/** `BENCH_ONLY=runtime` or `=floor`: run just that pass (to take a CPU profile of it); undefined runs both. */
export function benchOnly(): 'runtime' | 'floor' | undefined {
  const only = process.env.BENCH_ONLY;
  if (only === undefined || only === '') return undefined;
  if (only === 'runtime' || only === 'floor') return only;
  throw new Error(`BENCH_ONLY must be runtime or floor, not ${only}`);
}
