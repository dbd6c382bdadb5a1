import type { SessionRegistry } from './session-registry.js';
import type { Clock } from '../core/index.js';
import type { Random } from '../core/index.js';
import type { Ledger } from '../ledger/index.js';
import type { EventBus } from '../events/index.js';
import { createLedgerHealth, isStorageFault, watchLedger, type LedgerHealth } from './ledger-health.js';
import { reconcileAfterFault } from './recover.js';

/** The ledger as a runtime uses it, watched: its health, and the `onError` that leaves storage faults to it. */
export interface LedgerWatch {
  readonly ledger: Ledger;
  /** Undefined on a cluster worker, whose sessions are fenced and taken over instead. */
  readonly health: LedgerHealth | undefined;
  /** Reports a background failure: a storage fault once per fault (by the health monitor), others as they come. */
  readonly onError: (error: unknown) => void;
}

/** The ledger the runtime opened, with its cluster worker if any. */
export interface OpenedLedger {
  readonly ledger: Ledger;
  readonly worker: unknown;
}

/** Report a background failure when the options name no `onError`. */
function reportToConsole(error: unknown): void {
  console.error('agentlanes: background failure:', error instanceof Error ? error.message : error);
}

/** The parts opened after the ledger, read when a fault needs them. */
export interface LateParts {
  readonly bus: () => EventBus;
  readonly registry: () => SessionRegistry;
}

/** Watch a runtime's ledger (ledger-health.ts): runtime-wide events carry the session key '' (no session has it). */
export function watchRuntimeLedger(
  config: {
    readonly clock: Clock;
    readonly random: Random;
    /** @default a line on the console */
    readonly onError?: ((error: unknown) => void) | undefined;
  },
  opened: OpenedLedger,
  parts: LateParts,
): LedgerWatch {
  const { clock } = config;
  const reportError = config.onError ?? reportToConsole;
  if (opened.worker !== undefined) return { ledger: opened.ledger, health: undefined, onError: reportError };
  const onError = (error: unknown): void => {
    if (isStorageFault(error)) health.observe(error);
    else reportError(error);
  };
  const health: LedgerHealth = createLedgerHealth({
    ledger: opened.ledger,
    clock,
    random: config.random,
    report: reportError,
    announce: (event, unrecorded) => parts.bus().emit({ key: '', lastSeq: 0 }, event, { unrecorded }),
    reconcile: () =>
      reconcileAfterFault({
        ledger,
        clock,
        bus: parts.bus(),
        registry: parts.registry(),
        onError,
        runsSettled: () => health.runsSettled(),
      }),
  });
  const ledger = watchLedger(opened.ledger, health);
  return { ledger, health, onError };
}
