import type { Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { RuntimeError } from '../core/errors.js';
import type { RuntimeEvent } from '../core/events.js';
import type { SendResult, Session } from '../runtime/index.js';
import { openWriter, type EventRouteDeps } from './event-routes.js';
import type { FrameWriter } from './frame-writer.js';
import { readBody } from './http-errors.js';
import { scoped, sendAnswer } from './session-routes.js';
import { requireCapability } from './capabilities.js';
import type { ServerEnv } from './server-env.js';
import {
  startTranslation,
  translateEvent,
  type UiMessageChunk,
  type UiTranslation,
} from './ui-message-chunks.js';

/**
 * What `useChat` (the AI SDK's `DefaultChatTransport`) posts: the chat id, its messages, and what triggered the
 * request. Loose on purpose: the transport adds fields of its own (`trigger`, `messageId`, a caller's `body`),
 * and only the last message's text is used.
 */
const chatBodySchema = z.looseObject({
  id: z.string().optional(),
  messages: z
    .array(
      z.looseObject({
        id: z.string().min(1).max(256).optional(),
        role: z.string(),
        parts: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
      }),
    )
    .min(1),
});

/** The last message of the chat, which must be the user's, as the message to send. */
function lastUserMessage(body: z.output<typeof chatBodySchema>): { id?: string; text: string } {
  const last = body.messages.at(-1);
  if (last?.role !== 'user') throw new RuntimeError('invalid_input', 'the last message must be the user’s');
  const text = last.parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text ?? '')
    .join('');
  if (text === '') throw new RuntimeError('invalid_input', 'the last message has no text part');
  return { ...(last.id === undefined ? {} : { id: last.id }), text };
}

/** One UI message chunk as an SSE frame. */
function chunkFrame(chunk: UiMessageChunk | '[DONE]'): string {
  return `data: ${chunk === '[DONE]' ? chunk : JSON.stringify(chunk)}\n\n`;
}

/** The run a queued message became: the `run.started` that lists it (undefined for any other event). */
function runOfMessage(event: RuntimeEvent, messageId: string): string | undefined {
  return event.type === 'run.started' && event.messageIds.includes(messageId) ? event.runId : undefined;
}

/** Stream the run `result` belongs to (or the one its message starts later) until it ends or pauses. */
async function streamRun(
  writer: FrameWriter,
  session: Session,
  from: number,
  result: SendResult,
): Promise<void> {
  let state: UiTranslation | undefined =
    result.runId === undefined ? undefined : startTranslation(result.runId);
  await writer.write(chunkFrame({ type: 'start', messageId: `${result.messageId}:reply` }));
  await writer.write(chunkFrame({ type: 'start-step' }));
  for await (const event of session.events({ after: from, signal: writer.signal })) {
    if (writer.signal.aborted) return;
    if (state === undefined) {
      if (event.type === 'message.dropped' && event.messageId === result.messageId) {
        await writer.write(
          chunkFrame({ type: 'error', errorText: `the message was dropped (${event.reason})` }),
        );
        await writer.write(chunkFrame({ type: 'finish', finishReason: 'other' }));
        break;
      }
      const runId = runOfMessage(event, result.messageId);
      if (runId === undefined) continue;
      state = startTranslation(runId);
    }
    for (const chunk of translateEvent(state, event)) await writer.write(chunkFrame(chunk));
    if (state.done) break;
  }
  await writer.write(chunkFrame('[DONE]'));
}

/** The answer to a chat post: its run streamed in the UI message stream protocol. */
function chatStream(
  deps: EventRouteDeps,
  c: Context<ServerEnv>,
  session: Session,
  from: number,
  result: SendResult,
) {
  c.header('x-vercel-ai-ui-message-stream', 'v1');
  c.header('x-accel-buffering', 'no');
  const shutdown = chunkFrame({ type: 'abort', reason: 'shutdown' }) + chunkFrame('[DONE]');
  return streamSSE(c, async (stream) => {
    const { writer, forget } = openWriter(deps, c, stream, shutdown);
    try {
      if (result.disposition === 'duplicate') {
        await writer.write(chunkFrame({ type: 'start', messageId: `${result.messageId}:reply` }));
        await writer.write(chunkFrame({ type: 'finish', finishReason: 'other' }) + chunkFrame('[DONE]'));
        return;
      }
      await streamRun(writer, session, from, result);
    } catch (error) {
      const errorText = error instanceof Error ? error.message : String(error);
      await writer.write(chunkFrame({ type: 'error', errorText }) + chunkFrame('[DONE]'));
    } finally {
      forget();
    }
  });
}

/**
 * `POST /v1/sessions/:key/chat`: the body `useChat` sends; its last user message is sent to the session and the
 * run is streamed back in the AI SDK UI message stream protocol (`x-vercel-ai-ui-message-stream: v1`), so an
 * unmodified `useChat` front end talks to agentlanes. The run does not depend on the stream: a client that leaves
 * does not stop it.
 */
export function mountChatRoute(app: Hono<ServerEnv>, deps: EventRouteDeps): void {
  app.post('/v1/sessions/:key/chat', ...scoped('send'), requireCapability('read'), async (c) => {
    const session = deps.runtime.session(c.req.param('key'));
    const message = lastUserMessage(await readBody(c, chatBodySchema));
    // Taken before the send: every event the message causes comes after it.
    const from = deps.runtime.eventCursor();
    const result = await session.send(message);
    if (result.disposition === 'rejected') return sendAnswer(c, result);
    return chatStream(deps, c, session, from, result);
  });
}
