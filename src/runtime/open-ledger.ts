import { openClusterWorker } from '../cluster/index.js';
import type { Clock, TimerHandle } from '../core/index.js';
import type { Ledger } from '../ledger/index.js';
import { createPostgresLedger } from '../ledger/index.js';
import { createSqliteLedger } from '../ledger/index.js';
import type { RuntimeConfig } from './runtime-options.js';

/** The ledger a runtime uses, whether it owns it (and so closes it), and its event retention. */
export interface RuntimeLedger {
  readonly ledger: Ledger;
  /** True when the runtime opened the ledger itself; a ledger passed in stays open for its owner. */
  readonly owned: boolean;
  /** Start pruning old events (at once, then every hour); returns the stop function. */
  readonly startRetention: (onError: (error: unknown) => void) => () => void;
}

const pruneEveryMs = 3_600_000;

/** Open the configured ledger: a Ledger instance as given, else the Postgres ledger or the SQLite one at `path`. */
export function openRuntimeLedger(config: RuntimeConfig, clock: Clock): RuntimeLedger {
  const option = config.ledger;
  if (!('path' in option) && !('postgres' in option)) {
    return { ledger: option, owned: false, startRetention: () => () => undefined };
  }
  const ledger =
    'postgres' in option
      ? createPostgresLedger(option.postgres)
      : createSqliteLedger({ path: option.path, synchronous: option.synchronous });
  const maxAge = option.retention?.eventsMaxAgeMs;
  return {
    ledger,
    owned: true,
    startRetention(onError) {
      if (maxAge === undefined) return () => undefined;
      let timer: TimerHandle;
      let stopped = false;
      const prune = (): void => {
        if (stopped) return;
        ledger.pruneEvents(clock.now() - maxAge).catch(onError);
        timer = clock.setTimeout(prune, pruneEveryMs);
      };
      prune();
      return () => {
        stopped = true;
        clock.clearTimeout(timer);
      };
    },
  };
}

/** The runtime's ledger (see `openRuntimeLedger`), wrapped in its fences when the runtime is a cluster worker. */
export function openWorkerLedger(config: RuntimeConfig, clock: Clock, onError: (error: unknown) => void) {
  const opened = openRuntimeLedger(config, clock);
  const worker = openClusterWorker(config, opened.ledger, clock, onError);
  return { ...opened, worker, ledger: worker?.ledger ?? opened.ledger };
}
