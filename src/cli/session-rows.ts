import type { Ledger } from '../ledger/index.js';

/** How many events one read of the event log asks for, so memory stays bounded however long the log. */
export const eventPageSize = 1000;

/** What `agentlanes sessions` shows for one session. */
export interface SessionRow {
  readonly key: string;
  /** `running` with an open run, `queued` with messages still to run, else `idle`. */
  readonly state: 'running' | 'queued' | 'idle';
  readonly runs: number;
  readonly queued: number;
  /** The latest inbox acceptance, run start or end, or session update (ms); undefined when none is recorded. */
  readonly lastActivity: number | undefined;
}

/** The key and the time of the last event of every session in the event log, read a page at a time. */
async function scanEventLog(ledger: Ledger): Promise<Map<string, number>> {
  const lastEventAt = new Map<string, number>();
  let after = 0;
  for (;;) {
    const page = await ledger.readEvents({ after, limit: eventPageSize });
    for (const event of page) lastEventAt.set(event.sessionKey, event.at);
    const last = page[page.length - 1];
    if (last === undefined || page.length < eventPageSize) return lastEventAt;
    after = last.cursor;
  }
}

function latest(times: Iterable<number | undefined>): number | undefined {
  let result: number | undefined;
  for (const time of times) if (time !== undefined && (result === undefined || time > result)) result = time;
  return result;
}

async function describeSession(
  ledger: Ledger,
  key: string,
  updatedAt: number | undefined,
  lastEventAt: number | undefined,
): Promise<SessionRow> {
  const [state, runs, messages] = await Promise.all([
    ledger.loadSession(key),
    ledger.listRuns(key),
    ledger.listMessages(key),
  ]);
  const queued = state.pending.length;
  // Activity is what the chat did; the session row's time only counts when nothing else is known (closing the
  // runtime rewrites every session row, which would make all sessions look equally recent).
  const lastActivity =
    latest([messages[messages.length - 1]?.acceptedAt, ...runs.map((run) => run.endedAt ?? run.startedAt)]) ??
    updatedAt;
  return {
    key,
    state: runs.some((run) => run.status === 'running') ? 'running' : queued > 0 ? 'queued' : 'idle',
    runs: runs.length,
    queued,
    // A session known only from its events still gets a time: the last event's.
    lastActivity: lastActivity ?? lastEventAt,
  };
}

/**
 * Every session in the ledger, newest activity first: those with a `sessions` row, those with messages still
 * to run, and those only the event log knows (accepted messages whose session was never persisted).
 */
export async function listSessionRows(ledger: Ledger): Promise<SessionRow[]> {
  const [records, withPending, lastEventAt] = await Promise.all([
    ledger.listSessions(),
    ledger.listSessionsWithPending(),
    scanEventLog(ledger),
  ]);
  const updatedAt = new Map(records.map((record) => [record.sessionKey, record.updatedAt]));
  const keys = new Set([...updatedAt.keys(), ...withPending, ...lastEventAt.keys()]);
  const rows: SessionRow[] = [];
  for (const key of keys) {
    rows.push(await describeSession(ledger, key, updatedAt.get(key), lastEventAt.get(key)));
  }
  return rows.sort(
    (a, b) =>
      (b.lastActivity ?? Number.NEGATIVE_INFINITY) - (a.lastActivity ?? Number.NEGATIVE_INFINITY) ||
      a.key.localeCompare(b.key),
  );
}
