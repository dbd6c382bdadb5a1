import type { Clock } from '../core/index.js';
import { errorCodes, isRuntimeError, RuntimeError, type ErrorCode } from '../core/index.js';
import type { ClusterDatabase } from './cluster-db.js';
import { doorbellChannel, nowMs } from './cluster-schema.js';
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

/**
 * What forwarding needs. A forwarded call waits for its answer's own ring (`answer:<caller>:<request id>`) on the
 * doorbell's one LISTEN connection; `fallbackMs` is how often it reads the row anyway (a ring lost while the
 * listener reconnected) and checks that the owner still lives.
 */
export interface RequestDeps {
  readonly database: ClusterDatabase;
  readonly doorbell: Doorbell;
  readonly clock: Clock;
  /** How long a call sent back (its holder closing) waits before it is placed again. */
  readonly pollMs: number;
  readonly fallbackMs: number;
  /** This worker's current id (it changes when the lease is lost). */
  readonly workerId: () => string;
}

/** The ring that tells the caller `replyTo` its request `id` was answered. */
export function answerRing(replyTo: string, id: number): string {
  return `answer:${replyTo}:${id}`;
}

/** The fallback poll of a forwarded call: a few seconds, within half a lease, never below `pollMs`. */
export function answerFallbackMs(timing: { readonly leaseMs: number; readonly pollMs: number }): number {
  return Math.max(timing.pollMs, Math.min(5_000, Math.floor(timing.leaseMs / 2)));
}

/** The answer of the owner as the caller sees it: a value, or a thrown RuntimeError; undefined: route again. */
export function unpackAnswer(answer: Answer): { value: unknown } | undefined {
  if ('redirect' in answer) return undefined;
  if ('value' in answer) return { value: answer.value };
  const code = (errorCodes as readonly string[]).includes(answer.error.code) ? answer.error.code : 'internal';
  throw new RuntimeError(code, answer.error.message);
}

/** Wait until `ring` rings or `ms` passed, whichever comes first: true when it rang. */
function pause(deps: RequestDeps, ring: string, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const done = (rang: boolean): void => {
      off();
      deps.clock.clearTimeout(timer);
      resolve(rang);
    };
    const off = deps.doorbell.on(ring, () => done(true));
    const timer = deps.clock.setTimeout(() => done(false), ms);
  });
}

/** Take the answer of request `id` if it is stored (the row goes with it): one statement. */
async function takeAnswer(deps: RequestDeps, id: number): Promise<Answer | undefined> {
  const { rows } = await deps.database.query<{ answer: string }>(
    `DELETE FROM cluster_requests WHERE id = $1 AND status = 'answered' RETURNING answer`,
    [id],
  );
  const answer = rows[0]?.answer;
  return answer === undefined ? undefined : (JSON.parse(answer) as Answer);
}

/**
 * Forward a call to the worker `ownerId` that holds `request.sessionKey` and wait for its answer: a row and its ring
 * in one statement, then the answer's own ring and one statement that takes the answer. Without a ring, every
 * `fallbackMs` the row is read and the owner's lease checked. Undefined when the owner died before answering (its
 * pending request is withdrawn): route again.
 */
export async function forwardRequest(
  deps: RequestDeps,
  ownerId: string,
  request: Request,
): Promise<Answer | undefined> {
  const { database } = deps;
  const me = deps.workerId();
  const inserted = await database.query<{ id: number }>(
    `WITH request AS (
       INSERT INTO cluster_requests (session_key, worker_id, reply_to, kind, payload, status, created_at)
       VALUES ($1, $2, $3, $4, $5, 'pending', ${nowMs}) RETURNING id)
     SELECT id, pg_notify($6, $7) FROM request`,
    [
      request.sessionKey,
      ownerId,
      me,
      request.kind,
      JSON.stringify(request.payload ?? null),
      doorbellChannel,
      `request:${ownerId}`,
    ],
  );
  const id = (inserted.rows[0] as { id: number }).id;
  const ring = answerRing(me, id);
  for (;;) {
    const rang = await pause(deps, ring, deps.fallbackMs);
    const answer = await takeAnswer(deps, id);
    if (answer !== undefined) return answer;
    if (rang || (await workerAlive(database.query, ownerId))) continue;
    // Withdrawn unless the answer landed meanwhile; a request the dead owner had taken may have taken effect
    // (a send is then found by its message id: `duplicate`).
    const withdrawn = await database.query(
      `DELETE FROM cluster_requests WHERE id = $1 AND status <> 'answered'`,
      [id],
    );
    if (withdrawn.rowCount === 1) return undefined;
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
  const { database } = deps;
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
        // The answer and its ring in one statement (the ring is delivered with its commit).
        await database.query(
          `WITH answered AS (UPDATE cluster_requests SET status = 'answered', answer = $2 WHERE id = $1 RETURNING id)
           SELECT pg_notify($3, $4) FROM answered`,
          [row.id, JSON.stringify(answer), doorbellChannel, answerRing(row.reply_to, row.id)],
        );
      })
      .catch(onError);
  }
  return rows.length;
}
