import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { queueSettingsSchema, type QueueSettingsInput } from '../policies/index.js';
import { inboundMessageSchema } from '../actors/index.js';
import type { PendingCall, Runtime, SendResult, Session } from '../runtime/index.js';
import { requireSessionScope } from './auth.js';
import { refuseCapability, requireCapability, type Capability } from './capabilities.js';
import { errorResponse, readBody, readQuery } from './http-errors.js';
import type { ServerEnv } from './server-env.js';
import { controllerOf, senderFor } from './token-role.js';

/** `POST …/messages`: the message (`send()`'s input) and its per-message queue settings, side by side. */
export const sendBodySchema = inboundMessageSchema.extend(queueSettingsSchema.shape).strict();

const traceparentSchema = inboundMessageSchema.shape.traceparent.unwrap();

const abortSchema = z.object({ reason: z.string().max(1000).optional() }).strict();
const timeoutSchema = z
  .string()
  .regex(/^\d{1,12}$/, 'timeoutMs is a whole number of milliseconds')
  .transform(Number)
  .optional();
const approvalIdSchema = z.string().min(1).max(600).optional();
const approvalSchema = z
  .object({
    decision: z.enum(['approve', 'reject', 'edit']),
    approvalId: approvalIdSchema,
    args: z.record(z.string(), z.unknown()).optional(),
    message: z.string().optional(),
    remember: z.enum(['run', 'session']).optional(),
  })
  .strict();
const supplySchema = z.union([
  z.object({ output: z.unknown(), approvalId: approvalIdSchema }).strict(),
  z
    .object({
      error: z.union([z.string(), z.object({ message: z.string() }).strict()]),
      approvalId: approvalIdSchema,
    })
    .strict(),
]);
const planDecisionSchema = z
  .object({
    approve: z.array(z.string().min(1).max(512)).max(1000).optional(),
    reject: z.array(z.string().min(1).max(512)).max(1000).optional(),
    supply: z
      .array(z.object({ stepId: z.string().min(1).max(512), output: z.unknown() }).strict())
      .max(1000)
      .optional(),
    approvalIds: z.array(z.string().min(1).max(600)).max(1000).optional(),
  })
  .strict();
const runIdSchema = z.string().min(1).max(512);
const planBodySchema = z
  .object({ plan: z.record(z.string(), z.unknown()), options: z.record(z.string(), z.unknown()).optional() })
  .strict();

/** Split a send body into the message and its queue settings (settings left out stay out). */
export function splitSendBody(body: z.output<typeof sendBodySchema>): {
  message: z.output<typeof inboundMessageSchema>;
  settings: QueueSettingsInput;
} {
  const { mode, debounceMs, maxWaitMs, cap, drop, ...message } = body;
  const settings = Object.fromEntries(
    Object.entries({ mode, debounceMs, maxWaitMs, cap, drop }).filter(([, value]) => value !== undefined),
  ) as QueueSettingsInput;
  return { message, settings };
}

/** The answer to a send: 202 for what was accepted, 200 for a duplicate, 409 (with its code) for a refusal. */
export function sendAnswer(c: Context, result: SendResult): Response {
  if (result.disposition === 'rejected') {
    const code = result.code ?? 'rejected_busy';
    const message = code === 'queue_full' ? 'the session queue is full' : 'the session is busy (reject mode)';
    return c.json({ ...result, error: { code, message } }, 409);
  }
  return c.json(result, result.disposition === 'duplicate' ? 200 : 202);
}

/** The guards of a route on one session: the token covers its key, then holds `capability`. */
export function scoped(capability: Capability) {
  return [requireSessionScope, requireCapability(capability)] as const;
}

/** The session a request names (`invalid_input` on a bad key). */
function sessionOf(runtime: Runtime, c: Context<ServerEnv>): Session {
  return runtime.session(c.req.param('key') ?? '');
}

/**
 * The trace context a send carries: the body's `traceparent`, else a well-formed `traceparent` header (the W3C Trace
 * Context header an instrumented HTTP client sends). A malformed header is ignored, as the W3C spec asks; a
 * malformed body field is refused by `send()`.
 */
function traceOf(c: Context, message: z.output<typeof inboundMessageSchema>): { traceparent?: string } {
  if (message.traceparent !== undefined) return {};
  const header = c.req.header('traceparent');
  const valid = header !== undefined && traceparentSchema.safeParse(header).success;
  return valid ? { traceparent: header } : {};
}

/** Sending, aborting, waiting and reading status, queue and settings of one session. */
function mountControlRoutes(app: Hono<ServerEnv>, runtime: Runtime): void {
  app.post('/v1/sessions/:key/messages', ...scoped('send'), async (c) => {
    const session = sessionOf(runtime, c);
    const { message, settings } = splitSendBody(await readBody(c, sendBodySchema));
    const sender = senderFor(runtime, c.get('grant'), message.sender);
    return sendAnswer(
      c,
      await session.send(
        { ...message, ...traceOf(c, message), ...(sender === undefined ? {} : { sender }) },
        settings,
      ),
    );
  });
  app.post('/v1/sessions/:key/abort', ...scoped('abort'), async (c) => {
    const session = sessionOf(runtime, c);
    const { reason } = await readBody(c, abortSchema);
    const by = controllerOf(c.get('grant'));
    return c.json({ aborted: await session.abort({ ...(reason === undefined ? {} : { reason }), ...by }) });
  });
  app.post('/v1/sessions/:key/wait', ...scoped('read'), async (c) => {
    const session = sessionOf(runtime, c);
    const timeoutMs = readQuery('timeoutMs', c.req.query('timeoutMs'), timeoutSchema);
    await readBody(c, z.object({}).strict());
    return c.json(await session.waitForEnd(timeoutMs === undefined ? {} : { timeoutMs }));
  });
  app.get('/v1/sessions/:key', ...scoped('read'), async (c) => {
    const session = sessionOf(runtime, c);
    return c.json({ key: session.key, ...(await session.readStatus()) });
  });
  app.put('/v1/sessions/:key/settings', ...scoped('operate'), async (c) => {
    const session = sessionOf(runtime, c);
    await session.configure(await readBody(c, queueSettingsSchema));
    return c.body(null, 204);
  });
}

/** The queue of one session: list, clear, cancel one. */
function mountQueueRoutes(app: Hono<ServerEnv>, runtime: Runtime): void {
  app.get('/v1/sessions/:key/queue', ...scoped('read'), async (c) =>
    c.json({ queue: await sessionOf(runtime, c).readQueue() }),
  );
  app.delete('/v1/sessions/:key/queue', ...scoped('operate'), async (c) =>
    c.json({ removed: await sessionOf(runtime, c).queue.clear() }),
  );
  app.delete('/v1/sessions/:key/queue/:messageId', ...scoped('operate'), async (c) => {
    const cancelled = await sessionOf(runtime, c).queue.cancel(c.req.param('messageId'));
    if (!cancelled) return errorResponse(c, 404, 'not_found', 'no such message in the queue');
    return c.json({ cancelled });
  });
}

/**
 * The step `stepId` of the session's paused plan run, when a plan waits for it (a pending call of its own is
 * answered by `approve` as before).
 */
async function pausedPlanStep(
  runtime: Runtime,
  key: string,
  stepId: string,
): Promise<PendingCall | undefined> {
  const pending = await runtime.pendingCalls();
  return pending.find(
    (call) => call.planStep === true && call.sessionKey === key && call.toolCallId === stepId,
  );
}

/**
 * Answer a paused plan step as `POST …/approvals/:id` names it: approve or reject it (the plan resumes and the
 * answer waits until it stops again); an edit or a remembered decision is refused, a plan step has neither.
 */
async function decidePlanStep(
  c: Context<ServerEnv>,
  session: Session,
  step: PendingCall,
  decision: z.output<typeof approvalSchema>,
): Promise<Response> {
  if (decision.decision === 'edit' || decision.remember !== undefined) {
    const what = decision.decision === 'edit' ? 'edited' : 'remembered';
    return errorResponse(c, 400, 'invalid_input', `a plan step is approved or rejected, never ${what}`);
  }
  const stepIds = [step.toolCallId];
  const named = decision.approvalId === undefined ? {} : { approvalIds: [decision.approvalId] };
  const runId = step.runId;
  await session.approvePlan(
    decision.decision === 'approve' ? { runId, stepIds, ...named } : { runId, reject: stepIds, ...named },
  );
  return c.body(null, 204);
}

/** Decisions on paused runs and plans: approvals (a paused plan's steps among them) and supplied results. */
function mountDecisionRoutes(app: Hono<ServerEnv>, runtime: Runtime): void {
  app.post('/v1/sessions/:key/approvals/:toolCallId', ...scoped('approve'), async (c) => {
    const session = sessionOf(runtime, c);
    const decision = await readBody(c, approvalSchema);
    const toolCallId = c.req.param('toolCallId');
    const step = await pausedPlanStep(runtime, session.key, toolCallId);
    if (step !== undefined) return decidePlanStep(c, session, step, decision);
    await session.approve({ ...decision, toolCallId, ...controllerOf(c.get('grant')) });
    return c.body(null, 204);
  });
  app.post('/v1/sessions/:key/plans/:runId/approvals', ...scoped('approve'), async (c) => {
    const session = sessionOf(runtime, c);
    const runId = readQuery('runId', c.req.param('runId'), runIdSchema);
    const { approve = [], reject = [], supply = [], approvalIds } = await readBody(c, planDecisionSchema);
    const named = approvalIds === undefined ? {} : { approvalIds };
    return c.json(await session.approvePlan({ runId, stepIds: approve, reject, supply, ...named }));
  });
  app.post('/v1/sessions/:key/tool-results/:toolCallId', ...scoped('approve'), async (c) => {
    const session = sessionOf(runtime, c);
    const supplied = await readBody(c, supplySchema);
    const toolCallId = c.req.param('toolCallId');
    await session.supplyToolResult({ ...supplied, toolCallId, ...controllerOf(c.get('grant')) });
    return c.body(null, 204);
  });
}

/** Plans, and the session's record (runs, transcript). */
function mountRunRoutes(app: Hono<ServerEnv>, runtime: Runtime): void {
  app.post('/v1/sessions/:key/plans', ...scoped('send'), async (c) => {
    const session = sessionOf(runtime, c);
    const { plan, options } = await readBody(c, planBodySchema);
    // Steps named as approved run without asking: deciding that is an approval.
    if (options !== undefined && 'approvedSteps' in options && !c.get('grant').can.has('approve')) {
      return refuseCapability(c, 'approve');
    }
    return c.json(await session.executePlan(plan as never, options ?? {}));
  });
  app.get('/v1/sessions/:key/runs', ...scoped('read'), async (c) =>
    c.json({ runs: await sessionOf(runtime, c).runs() }),
  );
  app.get('/v1/sessions/:key/transcript', ...scoped('read'), async (c) =>
    c.json({ turns: await sessionOf(runtime, c).transcript() }),
  );
}

/** Every route on one session: each a thin call of the `Session` API. */
export function mountSessionRoutes(app: Hono<ServerEnv>, runtime: Runtime): void {
  mountControlRoutes(app, runtime);
  mountQueueRoutes(app, runtime);
  mountDecisionRoutes(app, runtime);
  mountRunRoutes(app, runtime);
}
