import type { MixedCommand, MixedLine, WorkloadMode } from './mixed-protocol.js';

/** The sessions the workload spreads over. */
export const sessionKeys = Array.from({ length: 300 }, (_, index) => `s${String(index).padStart(3, '0')}`);

/** Dispositions of an accepted message (stored in the inbox). */
export const acceptedDispositions = new Set(['started', 'queued', 'steered', 'collected', 'interrupted']);

/** Queue modes with their share of the sends (the rest of the commands are plans and redeliveries). */
const modeWeights: readonly (readonly [WorkloadMode, number])[] = [
  ['followup', 25],
  ['collect', 20],
  ['steer', 20],
  ['steer-backlog', 12],
  ['interrupt', 10],
  ['reject', 13],
];
const totalWeight = modeWeights.reduce((sum, [, weight]) => sum + weight, 0);

/** What the parent sent and what the children answered, across every round. */
export interface Tally {
  /** Message id -> the session and mode it was sent with (acknowledged or not). */
  readonly sent: Map<string, { readonly sessionKey: string; readonly mode: WorkloadMode }>;
  /** Message id -> the child's ack (written only after send() resolved). */
  readonly acked: Map<
    string,
    { readonly disposition: string; readonly runId?: string; readonly code?: string }
  >;
  /** Acks of a message id sent again after it was accepted: each must be `duplicate`. */
  readonly redeliveries: { readonly id: string; readonly disposition: string }[];
  /** Plan command id (or `resumed:<runId>`) -> the run and the status executePlan / approvePlan resolved with. */
  readonly plans: Map<string, { readonly runId: string; readonly status: string }>;
  readonly failures: string[];
  readonly background: string[];
  /** Operator decisions on re-delivered events that found nothing waiting. */
  stale: number;
  /** Runs still `running` in the file right after some SIGKILL. */
  readonly leftOpen: Set<string>;
}

/** An empty tally. */
export function createTally(): Tally {
  return {
    sent: new Map(),
    acked: new Map(),
    redeliveries: [],
    plans: new Map(),
    failures: [],
    background: [],
    stale: 0,
    leftOpen: new Set(),
  };
}

/** Record one line of a child. */
export function recordLine(tally: Tally, line: MixedLine): void {
  if ('ack' in line) {
    const first = tally.acked.get(line.ack);
    if (first !== undefined && acceptedDispositions.has(first.disposition)) {
      tally.redeliveries.push({ id: line.ack, disposition: line.disposition });
      return;
    }
    const runId = line.runId === undefined ? {} : { runId: line.runId };
    const code = line.code === undefined ? {} : { code: line.code };
    tally.acked.set(line.ack, { disposition: line.disposition, ...runId, ...code });
  } else if ('plan' in line) tally.plans.set(line.plan, { runId: line.runId, status: line.status });
  else if ('failed' in line) tally.failures.push(`${line.failed}: ${line.code} ${line.message}`);
  else if ('stale' in line) tally.stale++;
  else if ('background' in line) tally.background.push(line.background);
}

/**
 * The command source: bursts of one to four commands to one session (so messages meet busy sessions), each a
 * send in a weighted queue mode, now and then a plan (some risky) or a redelivery of an id the session already
 * had accepted (which must be answered `duplicate`). Ids are numbered per session across rounds.
 */
export function createWorkload(random: () => number, tally: Tally) {
  const between = (low: number, high: number): number => low + Math.floor(random() * (high - low + 1));
  const numbered = new Map<string, number>();
  let plans = 0;
  const pickMode = (): WorkloadMode => {
    let roll = random() * totalWeight;
    for (const [mode, weight] of modeWeights) {
      roll -= weight;
      if (roll < 0) return mode;
    }
    return 'followup';
  };
  const accepted = (key: string): string | undefined => {
    const last = numbered.get(key) ?? 0;
    for (let attempt = 0; attempt < 3 && last > 0; attempt++) {
      const id = `${key}-m${between(1, last)}`;
      if (acceptedDispositions.has(tally.acked.get(id)?.disposition ?? '')) return id;
    }
    return undefined;
  };
  const next = (key: string): MixedCommand => {
    const roll = random();
    if (roll < 0.04) return { op: 'plan', session: key, id: `${key}-p${++plans}`, risky: random() < 0.4 };
    const redelivered = roll < 0.07 ? accepted(key) : undefined;
    if (redelivered !== undefined) {
      const sent = tally.sent.get(redelivered);
      return { op: 'send', session: key, id: redelivered, text: 'again', mode: sent?.mode ?? 'followup' };
    }
    const sequence = (numbered.get(key) ?? 0) + 1;
    numbered.set(key, sequence);
    const id = `${key}-m${sequence}`;
    const mode = pickMode();
    tally.sent.set(id, { sessionKey: key, mode });
    return { op: 'send', session: key, id, text: `message ${sequence} of ${key}`, mode };
  };
  return {
    between,
    /** One burst of commands to one random session. */
    burst(): MixedCommand[] {
      const key = sessionKeys[between(0, sessionKeys.length - 1)] as string;
      return Array.from({ length: between(1, 4) }, () => next(key));
    },
  };
}
