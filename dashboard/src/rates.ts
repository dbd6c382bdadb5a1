/** How many one-second buckets the chart and the rates keep: five minutes. */
export const windowSeconds = 300;
/** The header's rates average over this many seconds. */
const rateSeconds = 10;

/** One second of traffic. */
interface Bucket {
  second: number;
  messages: number;
  events: number;
  /** The longest lane wait reported in that second (ms), or null when none was. */
  laneWaitMs: number | null;
}

/** Throughput and lane waits per second over the last minutes, fed by the live event stream. */
export interface Rates {
  /** Count one event (a received message counts as a message too) at `nowMs` (page time). */
  record(type: string, nowMs: number, laneWaitMs?: number): void;
  /** Messages and events per second over the last ten seconds. */
  perSecond(nowMs: number): { messages: number; events: number };
  /** The chart's columns: seconds (Unix), messages/s, events/s, lane wait (ms). */
  series(nowMs: number): [number[], number[], number[], (number | null)[]];
}

/** Create an empty rate window. */
export function createRates(): Rates {
  const buckets = new Map<number, Bucket>();
  const bucketAt = (second: number): Bucket => {
    let bucket = buckets.get(second);
    if (bucket === undefined) {
      bucket = { second, messages: 0, events: 0, laneWaitMs: null };
      buckets.set(second, bucket);
      for (const old of buckets.keys()) if (old <= second - windowSeconds) buckets.delete(old);
    }
    return bucket;
  };
  return {
    record(type, nowMs, laneWaitMs) {
      const bucket = bucketAt(Math.floor(nowMs / 1000));
      bucket.events += 1;
      if (type === 'message.received') bucket.messages += 1;
      if (laneWaitMs !== undefined) bucket.laneWaitMs = Math.max(bucket.laneWaitMs ?? 0, laneWaitMs);
    },
    perSecond(nowMs) {
      const now = Math.floor(nowMs / 1000);
      let messages = 0;
      let events = 0;
      // The current second is still filling: average over the full seconds before it.
      for (let second = now - rateSeconds; second < now; second += 1) {
        messages += buckets.get(second)?.messages ?? 0;
        events += buckets.get(second)?.events ?? 0;
      }
      return { messages: messages / rateSeconds, events: events / rateSeconds };
    },
    series(nowMs) {
      const now = Math.floor(nowMs / 1000);
      const columns: [number[], number[], number[], (number | null)[]] = [[], [], [], []];
      for (let second = now - windowSeconds + 1; second <= now; second += 1) {
        const bucket = buckets.get(second);
        columns[0].push(second);
        columns[1].push(bucket?.messages ?? 0);
        columns[2].push(bucket?.events ?? 0);
        columns[3].push(bucket?.laneWaitMs ?? null);
      }
      return columns;
    },
  };
}
