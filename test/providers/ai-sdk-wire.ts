/**
 * Vendor wire formats for the AI SDK provider tests: OpenAI chat completion chunks and Anthropic Messages events,
 * served by the loopback SSE server, and a server that reports when a client closes a hanging response.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDeferred } from '../../src/core/deferred.js';
import { encodeSseFrame, type ScriptedResponse, type SseFrame } from '../support/sse-server.js';

/** One `chat.completion.chunk` with a single choice. */
export function chunk(delta: Record<string, unknown>, finishReason: string | null = null) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-test',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** The last chunk `stream_options.include_usage` asks for: no choices, the usage. */
export function usageChunk(promptTokens: number, completionTokens: number) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-test',
    choices: [],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

/** A complete streamed chat completion: the chunks, then `[DONE]`. */
export function completion(...chunks: Record<string, unknown>[]): ScriptedResponse {
  return { sse: [...chunks.map((data) => ({ data })), { data: '[DONE]' }] };
}

/** A streamed answer `text` with usage 10/2. */
export function openaiText(text: string): ScriptedResponse {
  return completion(chunk({ role: 'assistant', content: text }), chunk({}, 'stop'), usageChunk(10, 2));
}

/** A streamed tool call, its arguments in two fragments. */
export function openaiToolCall(id: string, name: string, args: Record<string, unknown>): ScriptedResponse {
  const json = JSON.stringify(args);
  const half = Math.floor(json.length / 2);
  return completion(
    chunk({
      role: 'assistant',
      tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: json.slice(0, half) } }],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: json.slice(half) } }] }),
    chunk({}, 'tool_calls'),
    usageChunk(20, 5),
  );
}

/** An OpenAI error response. */
export function openaiError(status: number, message: string, headers: Record<string, string> = {}) {
  return { status, headers, json: { error: { message, type: 'requests', code: `code_${status}` } } };
}

/** An Anthropic stream event as a frame: `event: <type>` then its JSON. */
export function frame(data: { type: string } & Record<string, unknown>): SseFrame {
  return { event: data.type, data };
}

export function messageStart(inputTokens: number): SseFrame {
  return frame({
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [],
      model: 'claude-test',
      stop_reason: null,
      usage: { input_tokens: inputTokens, output_tokens: 1 },
    },
  });
}

/** A content block of `kind` ('text' or 'thinking') streaming `deltas`. */
export function block(index: number, kind: 'text' | 'thinking', ...deltas: string[]): SseFrame[] {
  const start = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' };
  const delta = (text: string) =>
    kind === 'text' ? { type: 'text_delta', text } : { type: 'thinking_delta', thinking: text };
  return [
    frame({ type: 'content_block_start', index, content_block: start }),
    ...deltas.map((text) => frame({ type: 'content_block_delta', index, delta: delta(text) })),
    frame({ type: 'content_block_stop', index }),
  ];
}

export function messageEnd(stopReason: string, outputTokens: number): SseFrame[] {
  return [
    frame({
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    }),
    frame({ type: 'message_stop' }),
  ];
}

/** A complete Anthropic answer `text`, usage `inputTokens`/3. */
export function anthropicText(text: string, inputTokens = 9): ScriptedResponse {
  return { sse: [messageStart(inputTokens), ...block(0, 'text', text), ...messageEnd('end_turn', 3)] };
}

/** A server whose every response starts an SSE stream with `frames` and hangs; `closed` resolves when a client goes. */
export async function startHangingServer(frames: readonly SseFrame[]) {
  const closed = createDeferred<void>();
  const received = createDeferred<void>();
  const responses: ServerResponse[] = [];
  const server = createServer((request, response) => {
    request.resume();
    responses.push(response);
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const item of frames) response.write(encodeSseFrame(item));
    response.on('close', () => closed.resolve());
    received.resolve();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received: received.promise,
    closed: closed.promise,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
