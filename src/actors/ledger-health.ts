import { basename } from 'node:path';
import {
  type Clock,
  type TimerHandle,
  createDeferred,
  type Deferred,
  isRuntimeError,
  RuntimeError,
  type EventInput,
  type Random,
} from '../core/index.js';
import { isFileFailure, type Ledger } from '../ledger/index.js';
import { backoffDelay } from '../policies/index.js';
import type { LedgerGuard, RunLease } from '../runner/index.js';
import type { SessionRegistry } from './session-registry.js';
import type { EventBus } from '../events/index.js';
import { reconcileAfterFault } from './runtime-sessions.js';

/** The SQLite code of a failure or of its cause, when there is one. */
function sqliteCodeOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current !== null && depth < 4; depth++) {
    const code = (current as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) return code;
    current = (current as { cause?: unknown } | undefined)?.cause;
  }
  return undefined;
}

/**
 * True when a ledger call failed because its storage did (a full disk, a read-only or vanished file, a lock held
 * past its timeout, an unreachable database: `ledger_unavailable`), not because of what was written.
 */
export function isStorageFault(error: unknown): boolean {
  if (isRuntimeError(error, 'ledger_unavailable')) return true;
  const code = sqliteCodeOf(error);
  return code !== undefined && isFileFailure(code);
}

/** The coded error a storage fault is reported as: the SQLite code and the ledger file's own name, no other path. */
function codedFault(error: unknown): RuntimeError {
  const path = isRuntimeError(error) ? error.details?.['path'] : undefined;
  const name = typeof path === 'string' ? `the ledger ${basename(path)}` : 'the ledger';
  const code = sqliteCodeOf(error);
  const why = code === undefined ? 'its storage is unavailable' : `its storage failed (${code})`;
  return new RuntimeError('ledger_unavailable', `${name} cannot take writes: ${why}; retrying with backoff`);
}

/** How the runtime stands with its ledger. */
export type LedgerHealthState = 'healthy' | 'faulted' | 'recovering';

/** The runtime-wide watch over ledger writes; the runs' side of it is `LedgerGuard`. */
export interface LedgerHealth extends LedgerGuard {
  readonly state: LedgerHealthState;
  /** See a failure of a ledger call: a storage fault enters `faulted` (reported once per fault). */
  observe(error: unknown): void;
  /** Resolves once every run that was active at a fault settled. */
  runsSettled(): Promise<void>;
}

/** What the health monitor needs: the ledger to probe, time, and where it reports and announces. */
export interface LedgerHealthDeps {
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly random: Random;
  /** The caller's `onError`: told once per fault, with a coded `ledger_unavailable`. */
  readonly report: (error: RuntimeError) => void;
  /** Deliver a runtime-wide event; `unrecorded` for one the ledger cannot take. */
  readonly announce: (event: EventInput, unrecorded: boolean) => void;
  /**
   * Writes commit again: reconcile the sessions from what is durable. Its synchronous part runs before the held
   * runs are released (so the sessions they belong to are stopped before they settle).
   */
  readonly reconcile: () => Promise<void>;
  /** Backoff of the probe writes. @default 100 ms doubling to 5 s */
  readonly backoff?: { readonly baseMs: number; readonly capMs: number };
}

/** The profile id the probe writes: a real write that commits, and that no configured profile reads. */
const probeProfileId = 'agentlanes:ledger-probe';

interface Lease extends RunLease {
  lost: boolean;
  readonly abort: () => void;
}

/**
 * The monitor. A storage fault seen on any ledger call enters `faulted`: it is reported once (`report`, a
 * `ledger.unavailable` event delivered live), every active run is aborted (it writes nothing more and its end waits
 * for the ledger), and a probe write is retried with backoff on the injected clock. Once one commits, `reconcile`
 * runs; then `ledger.available` is announced (recorded) and the state is `healthy` again.
 */
class LedgerHealthMonitor implements LedgerHealth {
  state: LedgerHealthState = 'healthy';
  private stopped = false;
  private faultedAt = 0;
  private attempt = 0;
  private timer: TimerHandle = undefined;
  private probing = false;
  private held: Deferred<void> = createDeferred<void>();
  private readonly leases = new Set<Lease>();
  private lostSettled: Deferred<void> | undefined;

  constructor(private readonly deps: LedgerHealthDeps) {}

  observe(error: unknown): void {
    if (!isStorageFault(error) || this.stopped || this.state === 'faulted') return;
    this.state = 'faulted';
    this.faultedAt = this.deps.clock.now();
    this.attempt = 0;
    const coded = codedFault(error);
    this.deps.report(coded);
    this.deps.announce(
      { type: 'ledger.unavailable', code: 'ledger_unavailable', message: coded.message },
      true,
    );
    for (const lease of this.leases) {
      lease.lost = true;
      lease.abort();
    }
    this.scheduleProbe();
  }

  enter(abort: () => void): RunLease {
    const lease: Lease = {
      lost: this.state === 'faulted',
      abort,
      exit: () => {
        this.leases.delete(lease);
        if (this.lostSettled !== undefined && !this.anyLost()) this.lostSettled.resolve();
      },
    };
    this.leases.add(lease);
    if (lease.lost) abort();
    return lease;
  }

  healed(): Promise<void> {
    return this.state === 'faulted' && !this.stopped ? this.held.promise : Promise.resolve();
  }

  runsSettled(): Promise<void> {
    if (!this.anyLost()) return Promise.resolve();
    this.lostSettled ??= createDeferred<void>();
    const waiting = this.lostSettled;
    return waiting.promise.finally(() => {
      if (this.lostSettled === waiting) this.lostSettled = undefined;
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.probing) this.deps.clock.clearTimeout(this.timer);
    this.held.resolve();
  }

  private anyLost(): boolean {
    return [...this.leases].some((lease) => lease.lost);
  }

  private scheduleProbe(): void {
    const backoff = this.deps.backoff ?? { baseMs: 100, capMs: 5_000 };
    const delay = backoffDelay(this.attempt++, this.deps.random, backoff);
    this.probing = true;
    this.timer = this.deps.clock.setTimeout(() => {
      this.probing = false;
      void this.probe();
    }, delay);
  }

  private async probe(): Promise<void> {
    if (this.stopped || this.state !== 'faulted') return;
    const { ledger, clock } = this.deps;
    try {
      await ledger.saveProfileState(probeProfileId, { probedAt: clock.now() }, clock.now());
    } catch (error) {
      if (this.stopped) return;
      // Refused for what it wrote, not for where (not a storage fault): the storage took the write.
      if (isStorageFault(error)) return this.scheduleProbe();
    }
    await this.recover();
  }

  private async recover(): Promise<void> {
    if (this.stopped) return;
    // Still `faulted` while the sessions are stopped: a run their stop aborts before it started writes nothing.
    const reconciled = this.deps.reconcile();
    this.state = 'recovering';
    // The held runs settle now, after their sessions were stopped: none can write or start anything after.
    const released = this.held;
    this.held = createDeferred<void>();
    released.resolve();
    try {
      await reconciled;
    } catch (error) {
      if (!isStorageFault(error))
        this.deps.report(new RuntimeError('internal', String(error), { cause: error }));
    }
    // A fault during the reconciliation starts over (its probe reconciles again).
    if (this.stopped || this.state !== 'recovering') return;
    this.state = 'healthy';
    const unavailableMs = this.deps.clock.now() - this.faultedAt;
    this.deps.announce({ type: 'ledger.available', unavailableMs }, false);
  }
}

/** Create the monitor of a runtime's ledger (see `LedgerHealthMonitor`). */
export function createLedgerHealth(deps: LedgerHealthDeps): LedgerHealth {
  return new LedgerHealthMonitor(deps);
}

/** Is `value` a promise-like result of a ledger call? */
function isThenable(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * The ledger as the runtime uses it: every call that fails because the storage did is seen by `health` before its
 * caller sees the failure (the SQLite and Postgres ledgers reject with a coded `ledger_unavailable` already). The
 * calls and their promises are the ledger's own, untouched: group commit and the timing of every write stay as they
 * were (a wrapped promise would settle a turn later and split what commits together).
 */
export function watchLedger(ledger: Ledger, health: Pick<LedgerHealth, 'observe'>): Ledger {
  const observe = (error: unknown): void => health.observe(error);
  // Each method wrapped once, on an object whose prototype is the ledger (its other properties read through).
  const watched = Object.create(ledger) as Record<string, unknown>;
  for (const key in ledger) {
    const value: unknown = (ledger as unknown as Record<string, unknown>)[key];
    if (typeof value !== 'function') continue;
    const method = value as (...args: unknown[]) => unknown;
    watched[key] = (...args: unknown[]): unknown => {
      const result = method.apply(ledger, args);
      // Registered first, so it runs before the caller's own handler (which may read the run's lease).
      if (isThenable(result)) result.then(undefined, observe);
      return result;
    };
  }
  return watched as unknown as Ledger;
}

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
