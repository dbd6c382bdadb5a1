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
  const crashed: CrashedRun[] = [];
  for (const run of await ledger.listOpenRuns()) {
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
  }
  for (const { run, text, endedAt } of crashed) {
    const { lastSeq } = await ledger.loadSession(run.sessionKey);
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
  const resume = new Set([
    ...crashed.map(({ run }) => run.sessionKey),
    ...(await ledger.listSessionsWithPending()),
  ]);
  for (const key of resume) {
    try {
      await registry.acquire(key);
    } catch (error) {
      onError(error);
    }
  }
}
