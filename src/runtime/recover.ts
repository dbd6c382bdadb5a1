import type { SessionRegistry } from '../actors/session-registry.js';
import type { Clock } from '../core/clock.js';
import type { Ledger, RunRecord } from '../ledger/ledger.js';
import type { EventBus, SeqHolder } from './event-bus.js';

const crashError = { code: 'internal', message: 'the process stopped while the run was active' } as const;

/**
 * Startup recovery. Runs a crash left open are closed as `crashed` with the text they had streamed and a
 * `run.ended` event, written in one synchronous stretch so they commit together (a crash during recovery leaves
 * the run open for the next start, never closed without its event); their messages count as consumed. Then every
 * session with messages still to run or a paused run is hydrated, which queues them in their original order and drains. Whatever
 * cannot be read (a corrupt row) is reported and skipped: the other sessions are served.
 */
export async function recoverAtStart(deps: {
  ledger: Ledger;
  clock: Clock;
  bus: EventBus;
  registry: SessionRegistry;
  onError: (error: unknown) => void;
}): Promise<void> {
  const { ledger, bus, registry, onError } = deps;
  bus.seek(await ledger.lastCursor());
  const crashed = await closeCrashedRuns(deps);
  const pending = await ledger.listSessionsWithPending().catch((error: unknown) => {
    onError(error);
    return [] as string[];
  });
  // Paused runs come back paused (their expiry timers re-armed); they are not crashed.
  const paused = await ledger.listPausedRuns().catch((error: unknown) => {
    onError(error);
    return [] as RunRecord[];
  });
  for (const key of new Set([...crashed, ...pending, ...paused.map((run) => run.sessionKey)])) {
    try {
      await registry.acquire(key);
    } catch (error) {
      onError(error);
    }
  }
}

/** Close every run a crash left open; returns their sessions. What cannot be read is reported and skipped. */
async function closeCrashedRuns(deps: {
  ledger: Ledger;
  clock: Clock;
  bus: EventBus;
  onError: (error: unknown) => void;
}): Promise<string[]> {
  const { ledger, clock, bus, onError } = deps;
  const open = await ledger.listOpenRuns().catch((error: unknown) => {
    onError(error);
    return [] as RunRecord[];
  });
  const sessions = new Map<string, SeqHolder>();
  for (const run of open) {
    try {
      const text = await ledger.runText(run.runId);
      let holder = sessions.get(run.sessionKey);
      if (holder === undefined) {
        holder = { key: run.sessionKey, lastSeq: (await ledger.loadSession(run.sessionKey)).lastSeq };
        sessions.set(run.sessionKey, holder);
      }
      const endedAt = clock.now();
      // One synchronous stretch: the close and its event commit together.
      const closed = ledger.closeRun(run.runId, {
        status: 'crashed',
        endedAt,
        text,
        usage: run.usage,
        error: crashError,
      });
      bus.emit(holder, {
        type: 'run.ended',
        runId: run.runId,
        status: 'crashed',
        text,
        usage: run.usage,
        durationMs: endedAt - run.startedAt,
        error: crashError,
      });
      await closed;
      await bus.flushed();
    } catch (error) {
      onError(error);
    }
  }
  return [...sessions.keys()];
}
