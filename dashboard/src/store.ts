import type { ActivityEvent, Api, PendingCall, RuntimeEvent, StatsResponse } from './api.js';
import { followEvents } from './follow-events.js';
import { createRates, windowSeconds, type Rates } from './rates.js';

/** One row of the sessions table. */
export interface SessionRow {
  readonly key: string;
  readonly state: string;
  readonly queued: number;
  readonly runId?: string | undefined;
  /** The last event or record update of the session (server clock, ms). */
  readonly lastActivity?: number | undefined;
}

/** Where the live event stream stands. */
export type Connection = 'connecting' | 'open' | 'retrying' | 'refused';

/** Everything the page shows, refreshed by the event stream. */
export interface DashboardState {
  readonly rows: ReadonlyMap<string, SessionRow>;
  /** Bumped whenever a row changes, so the table re-sorts only then. */
  readonly rowsVersion: number;
  readonly stats: StatsResponse | undefined;
  /**
   * Server clock minus page clock (ms): from `stats.now` when the server tells it, else from the time stamp of the
   * latest live event (countdowns run on the server's clock, which a test may have stopped).
   */
  readonly clockOffsetMs: number;
  readonly approvals: readonly PendingCall[];
  readonly connection: Connection;
  /** How long loading every session page took (ms), once done. */
  readonly loadMs: number | undefined;
  readonly rates: Rates;
}

/** The states a run's events move a session to, by event type. */
const movedTo: Readonly<Record<string, string>> = {
  'run.started': 'running',
  'assistant.delta': 'streaming',
  'assistant.reasoning': 'streaming',
  'compaction.started': 'compacting',
  'compaction.ended': 'running',
  'run.resumed': 'running',
};

/** The session state an event moves a row to, if it moves it. */
function stateAfter(event: RuntimeEvent): Partial<SessionRow> | undefined {
  if (event.type === 'run.paused') return { state: event.state };
  if (event.type === 'run.ended') return { state: 'idle', runId: undefined };
  const state = movedTo[event.type];
  if (state === undefined) return undefined;
  return event.runId === undefined ? { state } : { state, runId: event.runId };
}

const statsTriggers = new Set([
  'message.received',
  'run.started',
  'run.ended',
  'run.paused',
  'lane.waited',
  'profile.cooldown',
  'failover.rotated',
  'failover.fallback',
  'failover.waiting',
]);
const approvalTriggers = new Set([
  'run.paused',
  'run.resumed',
  'run.ended',
  'approval.requested',
  'approval.resolved',
  'tool.deferred',
  'tool.in_doubt',
  'tool.supplied',
]);
const queueTriggers = new Set([
  'message.received',
  'message.queued',
  'message.collected',
  'message.admitted',
  'message.dropped',
  'run.ended',
]);

/** The shortest time between two renders of the page's state (ms). */
const renderIntervalMs = 50;

/** The dashboard's state and the loops that keep it live. */
export interface DashboardStore {
  get(): DashboardState;
  subscribe(listener: () => void): () => void;
  /** Load the sessions, stats and approvals, then follow `/v1/events` until `signal` aborts. */
  start(signal: AbortSignal): Promise<void>;
  /** Re-read one session's status (after the page cancelled a queued message, say). */
  refreshSession(key: string): void;
  refreshApprovals(): void;
}

/** Create the store over a signed-in API. */
export function createDashboardStore(api: Api): DashboardStore {
  const rows = new Map<string, SessionRow>();
  let state: DashboardState = {
    rows,
    rowsVersion: 0,
    stats: undefined,
    clockOffsetMs: 0,
    approvals: [],
    connection: 'connecting',
    loadMs: undefined,
    rates: createRates(),
  };
  const listeners = new Set<() => void>();
  let notifyQueued = false;
  /** Tell the page at most once per frame interval: a burst of events re-sorts 10,000 rows once, not per event. */
  const notify = (): void => {
    if (notifyQueued) return;
    notifyQueued = true;
    setTimeout(() => {
      notifyQueued = false;
      for (const listener of listeners) listener();
    }, renderIntervalMs);
  };
  const update = (patch: Partial<DashboardState>): void => {
    state = { ...state, ...patch };
    notify();
  };
  const putRow = (row: SessionRow): void => {
    rows.set(row.key, row);
    update({ rowsVersion: state.rowsVersion + 1 });
  };

  const busy = new Set<string>();
  const again = new Set<string>();
  /**
   * Run `task` `ms` after the first request; requests while it waits or runs make one more run after it, so a
   * slow answer (stats over many sessions) never piles up requests and the last change is always read.
   */
  const soon = (name: string, ms: number, task: () => Promise<void>): void => {
    if (busy.has(name)) {
      again.add(name);
      return;
    }
    busy.add(name);
    setTimeout(() => {
      task()
        .catch(() => undefined)
        .finally(() => {
          busy.delete(name);
          if (again.delete(name)) soon(name, ms, task);
        });
    }, ms);
  };
  const loadStats = async (): Promise<void> => {
    const stats = await api.stats();
    update({ stats, ...(stats.now === undefined ? {} : { clockOffsetMs: stats.now - Date.now() }) });
  };
  const loadApprovals = async (): Promise<void> => update({ approvals: await api.approvals() });
  const refreshSession = (key: string): void =>
    soon(`session:${key}`, 150, async () => {
      const status = await api.status(key);
      const row = rows.get(key);
      putRow({ ...row, key, state: status.state, queued: status.queued, runId: status.runId });
    });

  const applyEvent = (event: RuntimeEvent): void => {
    const laneWait = event.type === 'lane.waited' ? event.waitedMs : undefined;
    state.rates.record(event.type, Date.now(), laneWait);
    if (state.stats?.now === undefined) state = { ...state, clockOffsetMs: event.at - Date.now() };
    const row = rows.get(event.sessionKey) ?? { key: event.sessionKey, state: 'idle', queued: 0 };
    putRow({ ...row, ...stateAfter(event), lastActivity: event.at });
    if (queueTriggers.has(event.type)) refreshSession(event.sessionKey);
    if (statsTriggers.has(event.type)) soon('stats', 300, loadStats);
    if (approvalTriggers.has(event.type)) soon('approvals', 100, loadApprovals);
  };

  /** A recorded event from before the page opened: counted in its second of the chart, and its session's last activity. */
  const applyRecorded = (event: ActivityEvent): void => {
    state.rates.record(event.type, event.at - state.clockOffsetMs, event.waitedMs);
    const row = rows.get(event.sessionKey) ?? { key: event.sessionKey, state: 'idle', queued: 0 };
    if ((row.lastActivity ?? 0) < event.at) rows.set(event.sessionKey, { ...row, lastActivity: event.at });
  };
  /**
   * Read the last minutes from the ledger; resolves the cursor the live stream goes on from (`now` when the server
   * cannot tell, so the page still follows what happens next).
   */
  const loadActivity = async (): Promise<string> => {
    try {
      const activity = await api.activity(windowSeconds);
      if (state.stats?.now === undefined) state = { ...state, clockOffsetMs: activity.now - Date.now() };
      for (const event of activity.events) applyRecorded(event);
      update({ rowsVersion: state.rowsVersion + 1 });
      return String(activity.cursor);
    } catch {
      return 'now';
    }
  };

  const loadSessions = async (): Promise<void> => {
    const started = performance.now();
    let after: string | undefined;
    do {
      const page = await api.sessionPage(after);
      for (const session of page.sessions) {
        const known = rows.get(session.key);
        // The later of the record's last update and the last event seen (the record is put only now and then).
        const latest = Math.max(known?.lastActivity ?? 0, session.updatedAt ?? 0);
        rows.set(session.key, { ...session, lastActivity: latest === 0 ? undefined : latest });
      }
      update({ rowsVersion: state.rowsVersion + 1 });
      after = page.next;
    } while (after !== undefined);
    update({ loadMs: performance.now() - started });
  };

  return {
    get: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async start(signal) {
      // The last minutes come from the ledger, the table, totals and waiting calls are read once, and the stream
      // goes on from where the recorded minutes ended.
      const after = await loadActivity();
      const following = followEvents({
        url: `/v1/events?after=${after}`,
        token: api.token,
        signal,
        onEvent: applyEvent,
        onState: (connection) => update({ connection }),
      });
      await Promise.all([loadStats(), loadSessions(), loadApprovals(), following]);
    },
    refreshSession,
    refreshApprovals: () => soon('approvals', 0, loadApprovals),
  };
}
