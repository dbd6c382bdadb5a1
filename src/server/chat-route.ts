import type { Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { RuntimeError } from '../core/index.js';
import type { RuntimeEvent } from '../core/index.js';
import type { SendResult, Session } from '../runtime/index.js';
import { openWriter, type EventRouteDeps } from './event-routes.js';
import type { FrameWriter } from './frame-writer.js';
import { readBody } from './http-errors.js';
import { scoped, sendAnswer } from './session-routes.js';
import { refuseCapability, requireCapability } from './capabilities.js';
import { answersOf, applyAnswers, toolPartsOf, waitingCallsOf } from './chat-approvals.js';
import { planResume, replyIdOf } from './chat-resume.js';
import type { ServerEnv } from './server-env.js';
import { controllerOf, senderFor } from './token-role.js';
import {
  startTranslation,
  translateEvent,
  type TranslationStart,
  type UiMessageChunk,
  type UiTranslation,
} from './ui-message-chunks.js';

/** A message of the chat as `useChat` posts it: only the last one is read. */
const chatMessageSchema = z.looseObject({
  id: z.string().min(1).max(256).optional(),
  role: z.string(),
  parts: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })).max(1000),
});

/** One message of a chat post. */
type ChatMessage = z.output<typeof chatMessageSchema>;

/**
 * What `useChat` (the AI SDK's `DefaultChatTransport`) posts: the chat id, its messages, and what triggered the
 * request. Loose on purpose: the transport adds fields of its own (`messageId`, a caller's `body`).
 */
const chatBodySchema = z.looseObject({
  id: z.string().optional(),
  trigger: z.string().optional(),
  messages: z.array(chatMessageSchema).min(1),
});

/** The text of a user message (`invalid_input` when it has none). */
function userText(message: ChatMessage): string {
  const text = message.parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text ?? '')
    .join('');
  if (text === '') throw new RuntimeError('invalid_input', 'the last message has no text part');
  return text;
}

/**
 * The id a regeneration of user message `userMessageId` is sent under: the same text again as a new message, its
 * id derived from the one it repeats and numbered by the runs that already answered it, so a second regeneration
 * is not taken for a duplicate of the first.
 */
async function regenerationId(session: Session, userMessageId: string): Promise<string> {
  const prefix = `${userMessageId}:regenerate-`;
  const answered = (await session.runs()).filter((run) =>
    run.messageIds.some((id) => id === userMessageId || id.startsWith(prefix)),
  ).length;
  return `${prefix}${answered}`;
}

/** One UI message chunk as an SSE frame. */
function chunkFrame(chunk: UiMessageChunk | '[DONE]'): string {
  return `data: ${chunk === '[DONE]' ? chunk : JSON.stringify(chunk)}\n\n`;
}

/** The run a queued message became: the `run.started` that lists it (undefined for any other event). */
function runOfMessage(event: RuntimeEvent, messageId: string): string | undefined {
  return event.type === 'run.started' && event.messageIds.includes(messageId) ? event.runId : undefined;
}

/** What a chat stream answers: the message it writes, and the run (known, or the one a queued message becomes). */
export interface ChatStreamPlan {
  /** The cursor the stream reads events after. */
  readonly from: number;
  /** The id of the assistant message written (the `start` chunk's). */
  readonly messageId: string;
  /** The run streamed, when known. */
  readonly runId?: string;
  /** Otherwise the message whose run is awaited (a message dropped before its run is an error chunk). */
  readonly awaitedMessageId?: string;
  /** Where the translation starts (a continuation of a message the client holds, a replay). */
  readonly start?: TranslationStart;
}

/** Stream the planned run until it ends or pauses. */
async function streamRun(writer: FrameWriter, session: Session, plan: ChatStreamPlan): Promise<void> {
  let state: UiTranslation | undefined =
    plan.runId === undefined ? undefined : startTranslation(plan.runId, plan.start);
  await writer.write(chunkFrame({ type: 'start', messageId: plan.messageId }));
  await writer.write(chunkFrame({ type: 'start-step' }));
  for await (const event of session.events({ after: plan.from, signal: writer.signal })) {
    if (writer.signal.aborted) return;
    if (state === undefined) {
      if (event.type === 'message.dropped' && event.messageId === plan.awaitedMessageId) {
        await writer.write(
          chunkFrame({ type: 'error', errorText: `the message was dropped (${event.reason})` }),
        );
        await writer.write(chunkFrame({ type: 'finish', finishReason: 'other' }));
        break;
      }
      const runId = runOfMessage(event, plan.awaitedMessageId ?? '');
      if (runId === undefined) continue;
      state = startTranslation(runId, plan.start);
    }
    for (const chunk of translateEvent(state, event)) await writer.write(chunkFrame(chunk));
    if (state.done) break;
  }
  await writer.write(chunkFrame('[DONE]'));
}

/** The answer to a chat request: the planned run streamed in the UI message stream protocol. */
export function chatStream(
  deps: EventRouteDeps,
  c: Context<ServerEnv>,
  session: Session,
  plan: ChatStreamPlan | { readonly duplicate: string },
) {
  c.header('x-vercel-ai-ui-message-stream', 'v1');
  c.header('x-accel-buffering', 'no');
  const shutdown = chunkFrame({ type: 'abort', reason: 'shutdown' }) + chunkFrame('[DONE]');
  return streamSSE(c, async (stream) => {
    const { writer, forget } = openWriter(deps, c, stream, shutdown);
    try {
      if ('duplicate' in plan) {
        await writer.write(chunkFrame({ type: 'start', messageId: plan.duplicate }));
        await writer.write(chunkFrame({ type: 'finish', finishReason: 'other' }) + chunkFrame('[DONE]'));
        return;
      }
      await streamRun(writer, session, plan);
    } catch (error) {
      const errorText = error instanceof Error ? error.message : String(error);
      await writer.write(chunkFrame({ type: 'error', errorText }) + chunkFrame('[DONE]'));
    } finally {
      forget();
    }
  });
}

/** Send the last (user) message, or its regeneration, and stream the run it becomes. */
async function answerUserMessage(
  deps: EventRouteDeps,
  c: Context<ServerEnv>,
  session: Session,
  body: z.output<typeof chatBodySchema>,
) {
  const last = body.messages.at(-1) as ChatMessage;
  const text = userText(last);
  let id = last.id;
  if (body.trigger === 'regenerate-message') {
    if (id === undefined)
      throw new RuntimeError('invalid_input', 'a regeneration names the user message it answers');
    id = await regenerationId(session, id);
  }
  // Taken before the send: every event the message causes comes after it.
  const from = deps.runtime.eventCursor();
  const sender = senderFor(deps.runtime, c.get('grant'), undefined);
  const message = { ...(id === undefined ? {} : { id }), text, ...(sender === undefined ? {} : { sender }) };
  const result: SendResult = await session.send(message);
  if (result.disposition === 'rejected') return sendAnswer(c, result);
  const messageId = replyIdOf(result.messageId);
  if (result.disposition === 'duplicate') return chatStream(deps, c, session, { duplicate: messageId });
  return chatStream(deps, c, session, {
    from,
    messageId,
    awaitedMessageId: result.messageId,
    ...(result.runId === undefined ? {} : { runId: result.runId }),
  });
}

/**
 * The re-post `useChat` makes once the page answered the calls that wait (`addToolApprovalResponse`,
 * `addToolOutput`): its last message is the assistant's. The answers are checked against the session's paused
 * run (approving needs the `approve` capability), handed to it, and the run's continuation is streamed into the
 * same assistant message.
 */
async function answerWaitingCalls(
  deps: EventRouteDeps,
  c: Context<ServerEnv>,
  session: Session,
  last: ChatMessage,
) {
  if (!c.get('grant').can.has('approve')) return refuseCapability(c, 'approve');
  const parts = toolPartsOf(last.parts);
  const waiting = await waitingCallsOf(deps.runtime, session.key);
  const answers = answersOf(parts, waiting);
  const runId = waiting.find((call) => call.toolCallId === answers[0]?.toolCallId)?.runId ?? '';
  // Taken before the answers: the run resumes after them.
  const from = deps.runtime.eventCursor();
  await applyAnswers(session, answers, controllerOf(c.get('grant')));
  return chatStream(deps, c, session, {
    from,
    runId,
    messageId: last.id ?? replyIdOf(runId),
    start: { parts: last.parts.length, calls: parts.map((part) => part.toolCallId) },
  });
}

/**
 * `POST /v1/sessions/:key/chat`: the body `useChat` sends; its last user message is sent to the session and the
 * run is streamed back in the AI SDK UI message stream protocol (`x-vercel-ai-ui-message-stream: v1`), so an
 * unmodified `useChat` front end talks to agentlanes. A last message of the assistant answers the calls its run
 * waits for; `regenerate-message` sends the user's text again as a new message. The run does not depend on the
 * stream: a client that leaves does not stop it (`GET …/chat/:chatId/stream` resumes it).
 */
export function mountChatRoute(app: Hono<ServerEnv>, deps: EventRouteDeps): void {
  app.post('/v1/sessions/:key/chat', ...scoped('send'), requireCapability('read'), async (c) => {
    const session = deps.runtime.session(c.req.param('key'));
    const body = await readBody(c, chatBodySchema);
    const last = body.messages.at(-1) as ChatMessage;
    if (last.role === 'assistant') return answerWaitingCalls(deps, c, session, last);
    if (last.role !== 'user')
      throw new RuntimeError('invalid_input', 'the last message must be the user’s or the assistant’s');
    return answerUserMessage(deps, c, session, body);
  });
  // The AI SDK's resumable-stream convention: `{api}/{chatId}/stream`. The session is the one the URL names (the
  // token's scope applies to it); the chat id only completes the path.
  app.get('/v1/sessions/:key/chat/:chatId/stream', ...scoped('read'), async (c) => {
    const session = deps.runtime.session(c.req.param('key'));
    const plan = await planResume(deps.runtime, session);
    if (plan === undefined) return c.body(null, 204);
    return chatStream(deps, c, session, plan);
  });
}
