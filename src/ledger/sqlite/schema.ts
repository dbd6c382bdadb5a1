import type Database from 'better-sqlite3';
import { RuntimeError } from '../../core/index.js';

/**
 * Schema changes, in order; `PRAGMA user_version` records how many have been applied. A shipped migration is
 * never edited: a change is a new one (tests rebuild old versions from these to check the upgrade).
 */
export const migrations: readonly string[] = [
  `
  CREATE TABLE sessions (
    session_key TEXT PRIMARY KEY,
    override TEXT NOT NULL,
    snapshot TEXT,
    epoch INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE inbox (
    session_key TEXT NOT NULL,
    ord INTEGER NOT NULL,
    message_id TEXT NOT NULL,
    text TEXT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL,
    accepted_at INTEGER NOT NULL,
    sender_id TEXT,
    channel TEXT,
    thread TEXT,
    run_id TEXT,
    summary TEXT,
    PRIMARY KEY (session_key, ord)
  ) WITHOUT ROWID;
  CREATE INDEX inbox_by_message ON inbox (session_key, message_id, ord);
  CREATE INDEX inbox_to_run ON inbox (session_key, ord) WHERE status IN ('pending', 'steered');
  CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    status TEXT NOT NULL,
    message_ids TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    ended_at INTEGER,
    error_code TEXT,
    error_message TEXT,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost REAL,
    text TEXT NOT NULL
  );
  CREATE INDEX runs_by_session ON runs (session_key);
  CREATE INDEX runs_open ON runs (status) WHERE status = 'running';
  CREATE TABLE turns (
    id INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL,
    run_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    at INTEGER NOT NULL,
    extra TEXT
  );
  CREATE INDEX turns_by_session ON turns (session_key, id);
  CREATE TABLE events (
    cursor INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    run_id TEXT,
    at INTEGER NOT NULL,
    body TEXT NOT NULL
  );
  CREATE INDEX events_by_session ON events (session_key, cursor);
  CREATE INDEX events_by_run ON events (run_id, cursor) WHERE type = 'assistant.delta';
  CREATE INDEX events_by_time ON events (at);
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE seq_marks (session_key TEXT PRIMARY KEY, last_seq INTEGER NOT NULL);
  CREATE TABLE auth_profiles (
    profile_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE approvals (
    tool_call_id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    run_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    args TEXT NOT NULL,
    status TEXT NOT NULL,
    decision TEXT,
    requested_at INTEGER NOT NULL,
    resolved_at INTEGER
  );
  CREATE TABLE deferred_calls (
    tool_call_id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    run_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    args TEXT NOT NULL,
    status TEXT NOT NULL,
    result TEXT,
    requested_at INTEGER NOT NULL,
    resolved_at INTEGER
  );
  `,
  // 2: paused tool batches and undo. `approvals` and `deferred_calls` were placeholders nothing ever wrote.
  `
  ALTER TABLE sessions ADD COLUMN tool_policy TEXT;
  DROP TABLE approvals;
  DROP TABLE deferred_calls;
  CREATE TABLE tool_calls (
    run_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    position INTEGER NOT NULL,
    session_key TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    args TEXT,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    decision TEXT,
    remember TEXT,
    result TEXT,
    requested_at INTEGER NOT NULL,
    resolved_at INTEGER,
    PRIMARY KEY (run_id, turn, position)
  );
  CREATE INDEX tool_calls_remembered ON tool_calls (session_key, remember, tool) WHERE remember IS NOT NULL;
  CREATE TABLE compensations (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    session_key TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    args TEXT,
    result TEXT,
    status TEXT NOT NULL,
    error_code TEXT,
    error_message TEXT,
    recorded_at INTEGER NOT NULL,
    undone_at INTEGER,
    PRIMARY KEY (run_id, seq)
  );
  CREATE INDEX runs_paused ON runs (status) WHERE status IN ('awaiting_approval', 'awaiting_tool_results');
  CREATE INDEX turns_by_run ON turns (run_id, id);
  `,
  // 3: plan runs: a plan's definition and approvals, and the result of each step that finished.
  `
  CREATE TABLE plans (
    run_id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    plan TEXT NOT NULL,
    options TEXT NOT NULL,
    approved_steps TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE plan_steps (
    run_id TEXT NOT NULL,
    step_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    success INTEGER NOT NULL,
    data TEXT,
    error_code TEXT,
    error_message TEXT,
    execution_time INTEGER NOT NULL,
    retries INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, step_id)
  );
  CREATE UNIQUE INDEX plan_steps_by_seq ON plan_steps (run_id, seq);
  `,
  // 4: durable event consumers: where each named consumer stands ('' as session_key: every session's events).
  `
  CREATE TABLE consumers (
    consumer TEXT NOT NULL,
    session_key TEXT NOT NULL,
    cursor INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (consumer, session_key)
  ) WITHOUT ROWID;
  `,
  // 5: inbox rows whose status is none of the known ones (corrupt: they would never run), found without a scan.
  `
  CREATE INDEX inbox_unknown_status ON inbox (session_key, ord)
    WHERE status NOT IN ('pending', 'steered', 'collected', 'consumed', 'dropped', 'cancelled');
  `,
  // 6: one index fewer to write per delta row: a run's deltas (read at recovery only) are found through its
  // session's events (events_by_session), the run's session read from its row.
  `
  DROP INDEX events_by_run;
  `,
  // 7: forked sessions (their transcript starts as the first \`turns\` of the parent's, stored by reference) and the
  // run (and its tool call) that spawned a subagent's run.
  `
  CREATE TABLE session_forks (
    session_key TEXT PRIMARY KEY,
    parent_key TEXT NOT NULL,
    turns INTEGER NOT NULL,
    up_to_run_id TEXT,
    at INTEGER NOT NULL
  );
  ALTER TABLE runs ADD COLUMN parent_run_id TEXT;
  ALTER TABLE runs ADD COLUMN parent_call_id TEXT;
  `,
  // Chat adapters' deliveries: per consumer, each reply block (run id + block index) and the platform message that
  // carries it; 'sending' is written before the send, so a crash leaves a trace the adapter resolves.
  `
  CREATE TABLE deliveries (
    consumer TEXT NOT NULL,
    run_id TEXT NOT NULL,
    block_index INTEGER NOT NULL,
    session_key TEXT NOT NULL,
    status TEXT NOT NULL,
    platform_message_id TEXT,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (consumer, run_id, block_index)
  ) WITHOUT ROWID;
  `,
  // Content parts of an inbound message: a JSON list of text parts and references to attachments stored in the
  // workspace (content-addressed), never their bytes.
  `
  ALTER TABLE inbox ADD COLUMN parts TEXT;
  `,
  // The sender's name and role (authority) of an inbound message: a message the session's snapshot did not know
  // yet (a crash right after its acknowledgement) runs with its own authority after the restart.
  `
  ALTER TABLE inbox ADD COLUMN sender_name TEXT;
  ALTER TABLE inbox ADD COLUMN sender_role TEXT;
  `,
  // Two index entries fewer per message (issue 27): a run's turns are found through its session (turns_by_session),
  // the run's session read from its row; a message's latest record by walking its session's inbox back from the
  // newest (the primary key), where a message being updated is found within a few rows.
  `
  DROP INDEX turns_by_run;
  DROP INDEX inbox_by_message;
  `,
  // Event packs (issue 27): one session's events of one transaction are stored as one row of type 'pack'
  // (sql/event-packs.ts). No table changes, but a build before this one would read such a row as corrupt, so it
  // must refuse the file (ledger_version), as it does any newer schema.
  `
  SELECT 1;
  `,
  // Retention on a side table (issue 27): each transaction's event rows leave one row here, their cursor range and
  // time range, so pruning by age finds its rows by cursor instead of an index entry per event (events_by_time:
  // ~68 bytes per message). The rows a file holds already are one range.
  `
  CREATE TABLE event_times (
    last_cursor INTEGER PRIMARY KEY,
    first_cursor INTEGER NOT NULL,
    min_at INTEGER NOT NULL,
    max_at INTEGER NOT NULL
  );
  INSERT INTO event_times (last_cursor, first_cursor, min_at, max_at)
    SELECT last_cursor, first_cursor, min_at, max_at FROM (
      SELECT max(cursor) AS last_cursor, min(cursor) AS first_cursor, min(at) AS min_at, max(at) AS max_at
      FROM events
    ) WHERE last_cursor IS NOT NULL;
  DROP INDEX events_by_time;
  `,
  // Shortened event bodies (issue 27): the frequent JSON pieces of a body are stored as one control character each
  // (sql/body-pieces.ts). No table changes, but a build before this one would read such a body as corrupt, so it
  // must refuse the file (ledger_version).
  `
  SELECT 1;
  `,
];

/** The schema version this build writes. */
export const schemaVersion = migrations.length;

/** The database's schema version; `ledger_version` when a newer agentlanes wrote it (nothing is changed). */
export function refuseNewer(db: Database.Database, path: string): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > schemaVersion) {
    throw new RuntimeError(
      'ledger_version',
      `${path} has schema version ${current}, newer than this agentlanes supports (${schemaVersion}); upgrade agentlanes`,
      { details: { path } },
    );
  }
  return current;
}

/**
 * Bring the database to `schemaVersion`, one migration per transaction. A database written by a newer
 * agentlanes is refused with `ledger_version`: guessing at an unknown schema could lose data.
 */
export function migrate(db: Database.Database, path: string): void {
  const current = refuseNewer(db, path);
  for (let version = current; version < schemaVersion; version++) {
    db.transaction(() => {
      db.exec(migrations[version] as string);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
