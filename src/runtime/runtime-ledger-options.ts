/** Where the runtime opens its own ledger: the `ledger` option's locations (RuntimeOptions in runtime-options.ts). */

/** Where the runtime opens its own SQLite ledger. */
export interface SqliteLedgerLocation {
  /** The database file; ':memory:' keeps it in memory. @default './agentlanes.db' */
  path?: string | undefined;
  /**
   * 'full' fsyncs each group commit; 'normal' only at checkpoints (faster, may lose the last commits).
   * @default 'full'
   */
  synchronous?: 'full' | 'normal' | undefined;
  /** Prune old events (turns and runs are kept). @default none: events are kept forever */
  retention?: EventRetentionOptions | undefined;
}

/** Where the runtime opens its own Postgres ledger (the distributed profile). */
export interface PostgresLedgerLocation {
  /** The Postgres ledger's database. */
  postgres: {
    /** A libpq connection string (`postgres://user:password@host:5432/db`); its password never reaches a message. */
    connectionString: string;
    /** The schema of the ledger's tables (created when missing; a lowercase identifier). @default 'agentlanes' */
    schema?: string | undefined;
  };
  /** Prune old events (turns and runs are kept). @default none: events are kept forever */
  retention?: EventRetentionOptions | undefined;
}

/** How long the runtime's own ledger keeps events. */
export interface EventRetentionOptions {
  /** Events older than this many ms are pruned, at start and then hourly. */
  eventsMaxAgeMs: number;
}
