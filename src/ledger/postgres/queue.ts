import type { PoolClient, QueryResult } from 'pg';
import { isConnectionFailure } from './errors.js';

/**
 * One statement on the ledger's connection: parameters by position; the statement is prepared once per connection.
 * One function per transaction (a new one after a rollback, whole or to a savepoint), so work may key what it
 * learned in the transaction on it (a `WeakMap`), knowing the key is dropped with anything rolled back.
 */
export type PostgresQuery = <Row = Record<string, unknown>>(
  text: string,
  values?: readonly unknown[],
) => Promise<{ readonly rows: Row[]; readonly rowCount: number }>;

/**
 * Work queued on the ledger: SQL over `query`, run in order with the rest of its batch. Its `tag`, if any, is
 * handed to every job of the batch (`batchTags`): what they may do for all of them at once. Work that only reads
 * (`readOnly`) opens no transaction: run before its batch sent anything, it reads what is committed, as the first
 * statement of a transaction would under READ COMMITTED, without the BEGIN.
 */
export type PostgresWork<T> = ((query: PostgresQuery) => Promise<T>) & {
  readonly tag?: unknown;
  readonly readOnly?: boolean;
};

/** The ordered queue of one Postgres ledger: every read and write, in call order, one batch per transaction. */
export interface PostgresQueue {
  /** Queue `work`; resolves with its value once the transaction it ran in committed. */
  run<T>(work: PostgresWork<T>): Promise<T>;
  /** Resolves once everything queued so far has settled. */
  idle(): Promise<void>;
  /**
   * True when none of `writes` (promises `run` returned) failed yet: each committed, or is queued or runs in the batch
   * under way (work queued now runs after it, in its transaction or the next, and can ask `failureOf`). False when
   * one failed or is not known here.
   */
  readonly unfailed: (writes: readonly Promise<unknown>[]) => boolean;
  /** Why `write` failed, once it did: its job's own error in the transaction running it, or its rejection. */
  readonly failureOf: (write: Promise<unknown>) => Error | undefined;
}

/** What the queue needs: a connection per batch, and what a failure means for callers. */
export interface PostgresQueueDeps {
  /** A connected client (opened and migrated); rejected when the server cannot be reached. */
  readonly connect: () => Promise<PoolClient>;
  readonly translate: (error: unknown) => Error;
  /**
   * Called whenever work done in a transaction is undone (a rollback, whole or to a job's savepoint, or a batch that
   * failed): what a store learned from that work in memory (a cache of rows it wrote) is to be forgotten.
   */
  readonly rolledBack?: () => void;
}

/**
 * The connection of one batch and its transaction, begun at the first statement: a batch whose jobs ran no
 * statement (answered from memory) costs no round trip.
 */
interface Transaction {
  readonly client: PoolClient;
  begun: boolean;
  readonly rolledBack: () => void;
}

async function begin(tx: Transaction): Promise<void> {
  if (tx.begun) return;
  tx.begun = true;
  await tx.client.query('BEGIN');
}

/** Roll back (`sql`: the whole transaction, or to a job's savepoint) and tell the stores. */
async function rollBack(tx: Transaction, sql: 'ROLLBACK' | 'ROLLBACK TO SAVEPOINT job'): Promise<void> {
  tx.rolledBack();
  if (!tx.begun) return;
  if (sql === 'ROLLBACK') tx.begun = false;
  await tx.client.query(sql);
}

interface Job {
  readonly work: PostgresWork<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  outcome?: { readonly value: unknown } | { readonly error: Error };
  /** Where the job stands: queued, in the batch under way, or settled (set as its promise is). */
  state: 'queued' | 'running' | 'committed' | 'failed';
  /** What it was rejected with, once it was. */
  rejection?: Error;
}

/** Batches hold at most this many jobs, so one transaction stays short when callers flood the queue. */
const maxBatch = 512;

/** Prepared-statement names by SQL text (the same text gets the same name on every connection). */
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) statementNames.set(text, (name = `agentlanes_${statementNames.size + 1}`));
  return name;
}

/** The statements each transaction runs last before its COMMIT, by the query functions of that transaction. */
const commitChecks = new WeakMap<PostgresQuery, Set<string>>();

/**
 * A multi-row statement whose rows a transaction gathers from its jobs: `sql` takes one array parameter per column
 * (`INSERT ... SELECT * FROM unnest($1::text[], ...)`), and writes `table`.
 */
export interface RowStatement {
  readonly sql: string;
  readonly table: string;
  /**
   * The statement as the bodies of CTEs of a transaction's one statement (see `combinedStatement`), its parameters
   * numbered as in `sql`: `[sql]` when absent, which is then one INSERT, UPDATE or DELETE.
   */
  readonly parts?: readonly string[];
  /**
   * Its `verify` is that every row given comes back from the RETURNING of its last part: checked inside the
   * combined statement, so it may go there (a statement with another `verify` is always sent alone).
   */
  readonly returnsEvery?: true;
  /**
   * Every row it writes, and every row it reads to write them, is named by the keys `gatherRows` is given (a run's
   * id, an inbox message's id): rows of keyed statements of one table with keys apart go in one combined statement,
   * in whatever order (each sees none of the others' rows, and needs not).
   */
  readonly keyed?: true;
  /**
   * Check what the statement answered for the rows it wrote (`columns`): throw for a row it did not write (an
   * UPDATE that found no row). The transaction then runs again job by job, so the error is that row's job's alone.
   */
  readonly verify?: (
    result: { readonly rows: readonly Record<string, unknown>[]; readonly rowCount: number },
    columns: readonly (readonly unknown[])[],
  ) => void;
  /** The error to give for a failure of the statement (a duplicate key), from the rows it tried to write. */
  readonly refuse?: (error: unknown, columns: readonly (readonly unknown[])[]) => unknown;
}

/** The pattern of a table's name in a statement's text, by table. */
const tableNames = new Map<string, RegExp>();
function namesOf(table: string): RegExp {
  let names = tableNames.get(table);
  if (names === undefined) tableNames.set(table, (names = new RegExp(`\\b${table}\\b`, 'u')));
  return names;
}

/** Rows gathered for one statement, and the pattern of its table's name in another statement's text. */
interface Gathered {
  readonly statement: RowStatement;
  readonly columns: unknown[][];
  readonly names: RegExp;
  /** The rows' keys (as `gatherRows` was given them): a row of a key already here waits for a new statement. */
  readonly keys: Set<string>;
}

/** What one transaction's query function carries: rows gathered, and the tags of its batch's jobs. */
interface TransactionState {
  readonly gathered: Gathered[];
  readonly tags: readonly unknown[];
  /** Write every gathered row whose table `text` names (every one without `text`), before that statement. */
  readonly write: (text?: string) => Promise<void>;
  /** The running job only reads (`PostgresWork.readOnly`). */
  reading: boolean;
}
const transactions = new WeakMap<PostgresQuery, TransactionState>();

/**
 * Gather rows (one array per column) for `statement`, to go in one statement with every other row the transaction
 * gathers for it: written before any later statement of the transaction that names its table (so reads see them,
 * and statements on one table keep their order), before a job's savepoint is released, and before COMMIT. A
 * failure of that statement fails the transaction, which the queue then runs again job by job (each job's rows
 * written at its own end, so the failure is its own). Outside a ledger transaction the rows are written at once.
 */
export async function gatherRows(
  query: PostgresQuery,
  statement: RowStatement,
  columns: readonly (readonly unknown[])[],
  keys: readonly string[] = [],
): Promise<void> {
  const state = transactions.get(query);
  if (state === undefined) {
    await writeRows((text, values) => query(text, values), statement, columns);
    return;
  }
  const ofTable = state.gathered.filter((entry) => entry.statement.table === statement.table);
  const apart = (entry: Gathered): boolean =>
    (entry.statement === statement || (entry.statement.keyed === true && statement.keyed === true)) &&
    !keys.some((key) => entry.keys.has(key));
  // Statements on one table keep their call order: rows of another statement of the table (unless both are keyed,
  // see `RowStatement.keyed`), or of a key already gathered (a second update of one row), first write what the
  // table has gathered.
  if (!ofTable.every(apart)) await state.write(statement.table);
  const open = state.gathered.find((entry) => entry.statement === statement);
  if (open === undefined) {
    const names = namesOf(statement.table);
    state.gathered.push({
      statement,
      columns: columns.map((column) => [...column]),
      names,
      keys: new Set(keys),
    });
    return;
  }
  columns.forEach((column, index) => open.columns[index]?.push(...column));
  for (const key of keys) open.keys.add(key);
}

/** Write gathered rows with `send`: the statement's `refuse` names a failure, its `verify` checks the answer. */
async function writeRows(
  send: (
    text: string,
    values: readonly unknown[],
  ) => Promise<{ rows: Record<string, unknown>[]; rowCount: number }>,
  statement: RowStatement,
  columns: readonly (readonly unknown[])[],
): Promise<void> {
  let result: { rows: Record<string, unknown>[]; rowCount: number };
  try {
    result = await send(statement.sql, columns);
  } catch (error) {
    if (isConnectionFailure(error) || statement.refuse === undefined) throw error;
    throw statement.refuse(error, columns);
  }
  statement.verify?.(result, columns);
}

/**
 * The tags of the jobs of the transaction `query` belongs to (see `PostgresQueue.run`): what a job may check for
 * the whole batch at once (postgres/fence.ts checks every fence of the batch in one statement).
 */
export function batchTags(query: PostgresQuery): readonly unknown[] {
  return transactions.get(query)?.tags ?? [];
}

/**
 * Run `statement` last before the COMMIT of `query`'s transaction, in the COMMIT's own message (no round trip
 * between them, so no stall of this process either): a check that raises fails the commit (a fence's lease, see
 * postgres/fence.ts). The statement is plain text, its values inlined; the same text is run once.
 */
export function checkBeforeCommit(query: PostgresQuery, statement: string): void {
  commitChecks.get(query)?.add(statement);
}

async function send<Row>(client: PoolClient, text: string, values: readonly unknown[]) {
  const result = await client.query({ name: statementName(text), text, values: [...values] });
  return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
}

function queryOn(tx: Transaction, checks: Set<string>, tags: readonly unknown[]): PostgresQuery {
  const { client } = tx;
  const gathered: Gathered[] = [];
  const state: TransactionState = { gathered, tags, write: () => Promise.resolve(), reading: false };
  const write = async (text?: string): Promise<void> => {
    if (gathered.length > 0) await begin(tx);
    for (let index = 0; index < gathered.length;) {
      const entry = gathered[index] as Gathered;
      if (text !== undefined && !entry.names.test(text)) {
        index++;
        continue;
      }
      gathered.splice(index, 1);
      await writeRows((sql, values) => send(client, sql, values), entry.statement, entry.columns);
    }
  };
  const query: PostgresQuery = async <Row>(text: string, values: readonly unknown[] = []) => {
    if (gathered.length > 0) await write(text);
    if (!state.reading) await begin(tx);
    return send<Row>(client, text, values);
  };
  commitChecks.set(query, checks);
  transactions.set(query, Object.assign(state, { write }));
  return query;
}

/** A gathered statement may go in a combined statement: none but the check of `returnsEvery` comes after it. */
const combinable = (statement: RowStatement): boolean =>
  statement.verify === undefined || statement.returnsEvery === true;

/**
 * The gathered statements as one: each statement's parts are CTEs of it (data-modifying CTEs all run, in one
 * snapshot, so each sees none of the others' rows: the statements of one transaction name different tables or
 * different rows, see `gatherRows`), and it selects the checks of `returnsEvery`, raising a refusal when one fails.
 * The statement is atomic: sent with no BEGIN, it is a transaction of its own.
 */
function combinedStatement(entries: readonly Gathered[]): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  for (const { statement, columns } of entries) {
    values.push(...columns);
    if (statement.returnsEvery === true) values.push(columns[0]?.length ?? 0);
  }
  return { text: combinedText(entries.map((entry) => entry.statement)), values };
}

/** The texts of combined statements, by their statements (a transaction's mix repeats: built once each). */
const combinedTexts = new Map<string, string>();
const statementIds = new WeakMap<RowStatement, number>();
let nextStatementId = 0;

/** The text of the statement combining `statements`, in that order (its values as `combinedStatement` lists them). */
function combinedText(statements: readonly RowStatement[]): string {
  const key = statements
    .map((statement) => {
      let id = statementIds.get(statement);
      if (id === undefined) statementIds.set(statement, (id = nextStatementId++));
      return id;
    })
    .join(',');
  const known = combinedTexts.get(key);
  if (known !== undefined) return known;
  const ctes: string[] = [];
  const checks: string[] = [];
  let offset = 0;
  statements.forEach((statement, index) => {
    const parts = statement.parts ?? [statement.sql];
    let highest = 0;
    parts.forEach((part, at) => {
      const shifted = part.replace(/\$(\d+)/gu, (_, number: string) => {
        highest = Math.max(highest, Number(number));
        return `$${Number(number) + offset}`;
      });
      ctes.push(`w${index}_${at} AS (${shifted})`);
    });
    offset += highest;
    if (statement.returnsEvery === true) {
      offset += 1;
      checks.push(`(SELECT count(*) FROM w${index}_${parts.length - 1}) = $${offset}::bigint`);
    }
  });
  const refused =
    checks.length === 0
      ? 'NULL'
      : `CASE WHEN ${checks.join(' AND ')} THEN NULL ELSE agentlanes_refuse('a gathered row was not found') END`;
  const text = `WITH ${ctes.join(', ')} SELECT ${refused} AS refused`;
  combinedTexts.set(key, text);
  return text;
}

/**
 * Write every row the transaction of `query` gathered, the statements that may go together in one (see
 * `combinedStatement`), the others alone. With `ownTransaction` (no commit check to run before a COMMIT), a
 * transaction not begun yet is not begun: the combined statement is the whole transaction, one round trip with no
 * BEGIN or COMMIT.
 */
async function writeTogether(tx: Transaction, query: PostgresQuery, ownTransaction: boolean): Promise<void> {
  const state = transactions.get(query);
  if (state === undefined || state.gathered.length === 0) return;
  const entries = state.gathered.splice(0);
  const together = entries.filter((entry) => combinable(entry.statement));
  const separate = entries.filter((entry) => !combinable(entry.statement));
  if (!ownTransaction || separate.length > 0) await begin(tx);
  for (const entry of separate) {
    await writeRows((sql, values) => send(tx.client, sql, values), entry.statement, entry.columns);
  }
  if (together.length === 0) return;
  const { text, values } = combinedStatement(together);
  await send(tx.client, text, values);
}

/** Write the rows the transaction of `query` gathered and has not written yet. */
async function writeGathered(query: PostgresQuery): Promise<void> {
  await transactions.get(query)?.write();
}

/** The tags of a batch's jobs (`PostgresWork.tag`). */
function tagsOf(batch: readonly Job[]): unknown[] {
  return batch.flatMap((job) => (job.work.tag === undefined ? [] : [job.work.tag]));
}

/** Run one job in its own savepoint: its failure rolls back its statements alone and rejects it alone (false). */
async function runJob(tx: Transaction, query: PostgresQuery, job: Job): Promise<boolean> {
  const { client } = tx;
  await begin(tx);
  await client.query('SAVEPOINT job');
  try {
    const value = await job.work(query);
    await writeGathered(query);
    job.outcome = { value };
    await client.query('RELEASE SAVEPOINT job');
    return true;
  } catch (error) {
    if (isConnectionFailure(error)) throw error;
    job.outcome = { error: error instanceof Error ? error : new Error(String(error)) };
    await rollBack(tx, 'ROLLBACK TO SAVEPOINT job');
    await client.query('RELEASE SAVEPOINT job');
    return false;
  }
}

/**
 * Every job straight in the open transaction, without a savepoint each (three round trips fewer per job), and the
 * rows they gathered in one statement at the end (`writeTogether`; with no commit check, and no job having sent a
 * statement of its own, that statement is the whole transaction): the common case, where nothing fails. When a job
 * fails, the transaction is rolled back: a batch of one job is then settled with its error ('settled'); a larger
 * one is begun again, to be run job by job in savepoints ('retry'), as is any batch whose combined statement failed.
 * Jobs are SQL over the connection, so running one again after a rollback does what it did the first time.
 */
async function runOptimistically(
  tx: Transaction,
  query: PostgresQuery,
  batch: readonly Job[],
  uncheckedCommit: () => boolean,
): Promise<'ran' | 'settled' | 'retry'> {
  let current: Job | undefined;
  const state = transactions.get(query);
  try {
    for (const job of batch) {
      current = job;
      if (state !== undefined) state.reading = job.work.readOnly === true;
      job.outcome = { value: await job.work(query) };
    }
    if (state !== undefined) state.reading = false;
  } catch (error) {
    if (isConnectionFailure(error)) throw error;
    await rollBack(tx, 'ROLLBACK');
    if (batch.length === 1 && current !== undefined) {
      current.outcome = { error: error instanceof Error ? error : new Error(String(error)) };
      return 'settled';
    }
    for (const job of batch) delete job.outcome;
    return 'retry';
  }
  try {
    await writeTogether(tx, query, uncheckedCommit());
    return 'ran';
  } catch (error) {
    // Which row failed (and its precise error: a duplicate key, a close of an unknown run) is learned job by job,
    // each job's statements sent alone.
    if (isConnectionFailure(error)) throw error;
    await rollBack(tx, 'ROLLBACK');
    for (const job of batch) delete job.outcome;
    return 'retry';
  }
}

/**
 * Every job (optimistically, else job by job in savepoints), then, if a transaction was begun, the commit checks and
 * COMMIT in one message. 'failed': a commit check refused the transaction (rolled back; the jobs are to run again).
 */
async function runTransaction(
  tx: Transaction,
  batch: readonly Job[],
  optimistic: boolean,
): Promise<'committed' | 'settled' | 'failed'> {
  const { client } = tx;
  let checks = new Set<string>();
  const tags = tagsOf(batch);
  // Commit checks are registered by the jobs as they run: whether there are any is asked once they ran.
  const outcome = optimistic
    ? await runOptimistically(tx, queryOn(tx, checks, tags), batch, () => checks.size === 0)
    : 'retry';
  if (outcome === 'settled') return 'settled';
  if (outcome === 'retry') {
    // Checks of a rolled-back attempt go with it (a job run again registers its own again).
    checks = new Set();
    let query = queryOn(tx, checks, tags);
    for (const job of batch) if (!(await runJob(tx, query, job))) query = queryOn(tx, checks, tags);
  }
  // Nothing was sent (every job answered from memory): nothing to commit.
  if (!tx.begun) return 'committed';
  tx.begun = false;
  // Several statements in one message answer one result each.
  let committed: QueryResult | QueryResult[];
  try {
    committed = (await client.query([...checks, 'COMMIT'].join('; '))) as QueryResult | QueryResult[];
  } catch (error) {
    if (isConnectionFailure(error) || checks.size === 0) throw error;
    tx.rolledBack();
    await client.query('ROLLBACK');
    for (const job of batch) delete job.outcome;
    return 'failed';
  }
  // COMMIT of a transaction an unnoticed error aborted answers ROLLBACK, not an error: never take it for done.
  const command = (Array.isArray(committed) ? committed.at(-1) : committed)?.command;
  if (command !== 'COMMIT') throw new Error(`the batch's transaction ended in ${String(command)}`);
  return 'committed';
}

/**
 * Run the batch in one transaction, then settle its jobs (a failed batch rejects every job of it). A transaction a
 * commit check refused runs once more, job by job: the jobs whose own checks fail now are refused alone.
 */
async function runBatch(deps: PostgresQueueDeps, batch: readonly Job[]): Promise<void> {
  let client: PoolClient;
  try {
    client = await deps.connect();
  } catch (error) {
    const failure = deps.translate(error);
    for (const job of batch) job.reject(failure);
    return;
  }
  const tx: Transaction = { client, begun: false, rolledBack: deps.rolledBack ?? (() => undefined) };
  try {
    const first = await runTransaction(tx, batch, true);
    if (first === 'failed' && (await runTransaction(tx, batch, false)) === 'failed')
      throw new Error("the batch's commit checks failed twice");
    client.release();
  } catch (error) {
    const broken = isConnectionFailure(error);
    tx.rolledBack();
    if (!broken) await client.query('ROLLBACK').catch(() => undefined);
    client.release(broken ? (error as Error) : undefined);
    const failure = deps.translate(error);
    for (const job of batch) job.reject(failure);
    return;
  }
  for (const job of batch) {
    const outcome = job.outcome;
    if (outcome !== undefined && 'error' in outcome) job.reject(deps.translate(outcome.error));
    else job.resolve(outcome?.value);
  }
}

/**
 * Create the queue. The first job of an event-loop turn schedules a batch; every job queued before it starts
 * joins it, and jobs queued while a batch runs form the next one (group commit: one COMMIT for all of them). A
 * read runs in the batch's transaction after the writes queued before it, so it sees them; its value is handed
 * out only once that transaction committed.
 */
export function createPostgresQueue(deps: PostgresQueueDeps): PostgresQueue {
  const jobs: Job[] = [];
  // The job of each promise handed out (while someone holds it): `unfailed` and `failureOf` read it.
  const jobOf = new WeakMap<Promise<unknown>, Job>();
  let draining: Promise<void> | undefined;
  const drain = async (): Promise<void> => {
    while (jobs.length > 0) {
      const batch = jobs.splice(0, maxBatch);
      for (const job of batch) job.state = 'running';
      await runBatch(deps, batch);
    }
    draining = undefined;
  };
  const schedule = (): void => {
    draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(drain);
  };
  return {
    run<T>(work: PostgresWork<T>): Promise<T> {
      let job!: Job;
      const done = new Promise<T>((resolve, reject) => {
        job = {
          work,
          resolve: (value) => {
            job.state = 'committed';
            resolve(value as T);
          },
          reject: (error) => {
            job.state = 'failed';
            job.rejection = error;
            reject(error);
          },
          state: 'queued',
        };
        jobs.push(job);
      });
      jobOf.set(done, job);
      schedule();
      return done;
    },
    idle: async () => {
      while (draining !== undefined) await draining;
    },
    unfailed: (writes) =>
      writes.every((write) => {
        const job = jobOf.get(write);
        return job !== undefined && job.state !== 'failed';
      }),
    failureOf: (write) => {
      const job = jobOf.get(write);
      if (job?.rejection !== undefined) return job.rejection;
      const outcome = job?.outcome;
      return outcome !== undefined && 'error' in outcome ? deps.translate(outcome.error) : undefined;
    },
  };
}
