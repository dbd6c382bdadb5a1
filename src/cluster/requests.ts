import type { Clock } from '../core/index.js';
import { errorCodes, isRuntimeError, RuntimeError, type ErrorCode } from '../core/index.js';
import type { ClusterDatabase } from './cluster-db.js';
import { nowMs } from './cluster-schema.js';
import type { Doorbell } from './doorbell.js';
import { workerAlive } from './session-owners.js';

/** What the owner answers: the call's value, its error, or "not mine" (the caller routes the call again). */
export type Answer =
  | { readonly value: unknown }
  | { readonly error: { readonly code: ErrorCode; readonly message: string } }
  | { readonly redirect: true };

/** A request as the owner serves it. */
export interface Request {
  readonly sessionKey: string;
  readonly kind: string;
  readonly payload: unknown;
}

/** What forwarding needs. `pollMs` bounds how late a request or answer is seen when its NOTIFY was missed. */
export interface RequestDeps {
  readonly database: ClusterDatabase;
  readonly doorbell: Doorbell;
  readonly clock: Clock;
  readonly pollMs: number;
  /** This worker's current id (it changes when the lease is lost). */
  readonly workerId: () => string;
}

/** The answer of the owner as the caller sees it: a value, or a thrown RuntimeError; undefined: route again. */
export function unpackAnswer(answer: Answer): { value: unknown } | undefined {
  if ('redirect' in answer) return undefined;
  if ('value' in answer) return { value: answer.value };
  const code = (errorCodes as readonly string[]).includes(answer.error.code) ? answer.error.code : 'internal';
  throw new RuntimeError(code, answer.error.message);
}

/** Wait until `ring` rings or `ms` passed, whichever comes first. */
function pause(deps: RequestDeps, ring: string, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      off();
      deps.clock.clearTimeout(timer);
      resolve();
    };
    const off = deps.doorbell.on(ring, done);
    const timer = deps.clock.setTimeout(done, ms);
  });
}

interface RequestRow {
  readonly status: string;
  readonly answer: string | null;
}

/**
 * Forward a call to the worker `ownerId` that holds `request.sessionKey` and wait for its answer: a row, then a
 * ring. Undefined when the owner died before answering (its pending request is withdrawn): route again.
 */
export async function forwardRequest(
  deps: RequestDeps,
  ownerId: string,
  request: Request,
): Promise<Answer | undefined> {
  const { database, doorbell } = deps;
  const me = deps.workerId();
  const inserted = await database.query<{ id: number }>(
    `INSERT INTO cluster_requests (session_key, worker_id, reply_to, kind, payload, status, created_at)
     VALUES ($1, $2, $3, $4, $5, 'pending', ${nowMs}) RETURNING id`,
    [request.sessionKey, ownerId, me, request.kind, JSON.stringify(request.payload ?? null)],
  );
  const id = (inserted.rows[0] as { id: number }).id;
  await doorbell.ring(`request:${ownerId}`);
  for (;;) {
    const { rows } = await database.query<RequestRow>(
      'SELECT status, answer FROM cluster_requests WHERE id = $1',
      [id],
    );
    const row = rows[0];
    if (row?.status === 'answered' && row.answer !== null) {
      await database.query('DELETE FROM cluster_requests WHERE id = $1', [id]);
      return JSON.parse(row.answer) as Answer;
    }
    if (!(await workerAlive(database.query, ownerId))) {
      // Withdrawn unless the answer landed meanwhile; a request the dead owner had taken may have taken effect
      // (a send is then found by its message id: `duplicate`).
      const withdrawn = await database.query(
        `DELETE FROM cluster_requests WHERE id = $1 AND status <> 'answered'`,
        [id],
      );
      if (withdrawn.rowCount === 1) return undefined;
      continue;
    }
    await pause(deps, `answer:${me}`, deps.pollMs);
  }
}

/** The answer to store for a settled call. */
export function answerOf(outcome: { value: unknown } | { error: unknown }): Answer {
  if ('value' in outcome) return { value: outcome.value ?? null };
  const error = outcome.error;
  if (isRuntimeError(error)) return { error: { code: error.code, message: error.message } };
  return { error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } };
}

interface TakenRow {
  readonly id: number;
  readonly session_key: string;
  readonly reply_to: string;
  readonly kind: string;
  readonly payload: string;
}

/**
 * Take the requests addressed to this worker, oldest first, and start serving each in that order (so a session's
 * calls reach its gate in the order they were written); each answer is stored and rung as soon as it settles.
 */
export async function serveRequests(
  deps: RequestDeps,
  serve: (request: Request) => Promise<Answer>,
  onError: (error: unknown) => void,
): Promise<number> {
  const { database, doorbell } = deps;
  const { rows } = await database.query<TakenRow>(
    `UPDATE cluster_requests SET status = 'taken' WHERE id IN (
       SELECT id FROM cluster_requests WHERE worker_id = $1 AND status = 'pending'
       ORDER BY id LIMIT 200 FOR UPDATE SKIP LOCKED)
     RETURNING id, session_key, reply_to, kind, payload`,
    [deps.workerId()],
  );
  rows.sort((a, b) => a.id - b.id);
  for (const row of rows) {
    const request = {
      sessionKey: row.session_key,
      kind: row.kind,
      payload: JSON.parse(row.payload) as unknown,
    };
    serve(request)
      .then(async (answer) => {
        await database.query(`UPDATE cluster_requests SET status = 'answered', answer = $2 WHERE id = $1`, [
          row.id,
          JSON.stringify(answer),
        ]);
        await doorbell.ring(`answer:${row.reply_to}`);
      })
      .catch(onError);
  }
  return rows.length;
}
