import type { Ledger } from 'agentlanes';

/** `inner` with its session reads counted: the keys of each batch read (`loadSessions`), and each single read. */
export function countingLoads(inner: Ledger, overrides: Partial<Ledger> = {}) {
  const batches: string[][] = [];
  const singles: string[] = [];
  const ledger: Ledger = {
    ...inner,
    loadSessions: (keys) => {
      batches.push([...keys]);
      return inner.loadSessions?.(keys) ?? Promise.resolve([]);
    },
    loadSession: (key) => {
      singles.push(key);
      return inner.loadSession(key);
    },
    ...overrides,
  };
  return { ledger, batches, singles };
}
