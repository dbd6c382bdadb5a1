import type { SessionRegistry } from '../actors/session-registry.js';
import type { Clock } from '../core/clock.js';
import type { Ledger, RunRecord } from '../ledger/ledger.js';
import type { EventBus } from './event-bus.js';

/** What a crash left behind, now recorded: the run and how it was closed. */
interface CrashedRun {
  readonly run: RunRecord;
  readonly text: string;
  readonly endedAt: number;
}

const crashError = { code: 'internal', message: 'the process stopped while the run was active' } as const;

/**
 * Startup recovery. Runs a crash left open are closed as `crashed` with the text they had streamed and a
 * `run.ended` event; their messages count as consumed. Then every session with messages still to run is
 * hydrated, which queues them in their original order and drains. A session that cannot be recovered (a corrupt
 * row) is reported and skipped: the others are served.
 */
export async function recoverAtStart(deps: {
  ledger: Ledger;
  clock: Clock;
  bus: EventBus;
  registry: SessionRegistry;
  onError: (error: unknown) => void;
}): Promise<void> {
  const { ledger, clock, bus, registry, onError } = deps;
  bus.seek(await ledger.lastCursor());
  const crashed = await closeCrashedRuns(ledger, clock, onError);
  for (const { run, text, endedAt } of crashed) {
    const { lastSeq } = await ledger.loadSession(run.sessionKey).catch(() => ({ lastSeq: Number.NaN }));
    if (Number.isNaN(lastSeq)) continue; // that session's rows cannot be read: reported when it is used
    bus.emit(
      { key: run.sessionKey, lastSeq },
      {
        type: 'run.ended',
        runId: run.runId,
        status: 'crashed',
        text,
        usage: run.usage,
        durationMs: endedAt - run.startedAt,
        error: crashError,
      },
    );
    await bus.flushed();
  }
  const pending = await ledger.listSessionsWithPending().catch((error: unknown) => {
    onError(error);
    return [] as string[];
  });
  for (const key of new Set([...crashed.map(({ run }) => run.sessionKey), ...pending])) {
    try {
      await registry.acquire(key);
    } catch (error) {
      onError(error);
    }
  }
}

/** Close every run a crash left open; one that cannot be read or closed is reported and skipped. */
async function closeCrashedRuns(
  ledger: Ledger,
  clock: Clock,
  onError: (error: unknown) => void,
): Promise<CrashedRun[]> {
  const open = await ledger.listOpenRuns().catch((error: unknown) => {
    onError(error);
    return [] as RunRecord[];
  });
  const crashed: CrashedRun[] = [];
  for (const run of open) {
    try {
      const text = await ledger.runText(run.runId);
      const endedAt = clock.now();
      await ledger.closeRun(run.runId, {
        status: 'crashed',
        endedAt,
        text,
        usage: run.usage,
        error: crashError,
      });
      crashed.push({ run, text, endedAt });
    } catch (error) {
      onError(error);
    }
  }
  return crashed;
}
