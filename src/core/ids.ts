/** A source of random numbers in [0, 1), injectable so tests are deterministic. */
export type Random = () => number;

/** Makes unique ids with a readable prefix (`run_…`, `msg_…`), injectable so tests are deterministic. */
export type IdGenerator = (prefix: string) => string;

/** The default id generator: the prefix and a random UUID's first 20 hex digits. */
export const randomIds: IdGenerator = (prefix) =>
  `${prefix}_${globalThis.crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`;

/** A deterministic id generator: `prefix_1`, `prefix_2`, … (one counter per generator). */
export function sequentialIds(): IdGenerator {
  let counter = 0;
  return (prefix) => `${prefix}_${++counter}`;
}

/** A seeded pseudo-random source (mulberry32), for reproducible tests and demos. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
