/**
 * A bot on any AI SDK model: here @ai-sdk/openai, with a tool, two keys that rotate on rate limits, and a fallback.
 *
 *   npx tsx examples/ai-sdk-bot.ts "where is my order A7?"
 *
 * With OPENAI_API_KEY set it asks gpt-4o-mini at api.openai.com; without, it starts a local stand-in on 127.0.0.1
 * that speaks OpenAI's chat completions stream (a tool call, then an answer), so it runs with no key and no network.
 * OPENAI_BASE_URL points it at another OpenAI-compatible server (vLLM, Ollama, a proxy).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';
import { createMemoryLedger, createRuntime, defineTool } from 'agentlanes';
import { aiSdkProvider } from 'agentlanes/ai-sdk';

const orderStatus = defineTool({
  name: 'order_status',
  description: 'The shipping status of an order',
  input: z.object({ order: z.string() }),
  execute: ({ order }) => ({ order, status: 'shipped', eta: 'tomorrow' }),
});

/** The stand-in's answer: a tool call for the order first, then a sentence built from the tool result. */
function standInChunks(body: { messages?: { role: string; content?: unknown }[] }): object[] {
  const result = body.messages?.findLast((message) => message.role === 'tool');
  const chunk = (delta: object, finish: string | null = null) => ({
    id: 'stand-in',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'stand-in',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const usage = {
    id: 'stand-in',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'stand-in',
    choices: [],
  };
  if (result === undefined) {
    const call = {
      index: 0,
      id: 'call_1',
      type: 'function',
      function: { name: 'order_status', arguments: '' },
    };
    return [
      chunk({ role: 'assistant', tool_calls: [call] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"order":"A7"}' } }] }),
      chunk({}, 'tool_calls'),
      { ...usage, usage: { prompt_tokens: 42, completion_tokens: 9, total_tokens: 51 } },
    ];
  }
  const found = JSON.parse(String(result.content)) as { order: string; status: string; eta: string };
  return [
    chunk({ role: 'assistant', content: `Order ${found.order} has ${found.status}` }),
    chunk({ content: ` and arrives ${found.eta}.` }),
    chunk({}, 'stop'),
    { ...usage, usage: { prompt_tokens: 60, completion_tokens: 11, total_tokens: 71 } },
  ];
}

/** A loopback server speaking OpenAI's chat completions stream; resolves to its base URL and a close function. */
async function startStandIn(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let text = '';
    request.on('data', (data: Buffer) => (text += data.toString('utf8')));
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const chunk of standInChunks(JSON.parse(text) as Parameters<typeof standInChunks>[0])) {
        response.write(`data: ${JSON.stringify(chunk)}\n\n`);
      }
      response.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const realKey = process.env.OPENAI_API_KEY;
const standIn =
  realKey === undefined && process.env.OPENAI_BASE_URL === undefined ? await startStandIn() : undefined;
const baseURL = standIn?.url ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1';

const runtime = createRuntime({
  ledger: createMemoryLedger(),
  providers: {
    // One model per key and model id: the auth profiles rotate keys, the fallback asks another model.
    openai: aiSdkProvider({ model: (apiKey, modelId) => createOpenAI({ apiKey, baseURL }).chat(modelId) }),
  },
  model: { provider: 'openai', model: 'gpt-4o-mini', fallbacks: [{ provider: 'openai', model: 'gpt-4o' }] },
  authProfiles: [
    { id: 'key-1', provider: 'openai', type: 'api_key', secret: realKey ?? 'stand-in-key-1' },
    {
      id: 'key-2',
      provider: 'openai',
      type: 'api_key',
      secret: process.env.OPENAI_API_KEY_2 ?? 'stand-in-key-2',
    },
  ],
  tools: [orderStatus],
  systemPrompt: 'You answer questions about orders. Use order_status.',
});

const session = runtime.session('cli:1');
const question = process.argv[2] ?? 'where is my order A7?';
const follow = new AbortController();
// What the run does, in the order it happens: tool calls, then the usage of every model call and the reply.
const printing = (async () => {
  for await (const event of runtime.events({ signal: follow.signal })) {
    if (event.type === 'tool.succeeded') console.log(`tool ${event.tool} succeeded`);
    if (event.type === 'run.ended') {
      console.log(`usage: ${event.usage.inputTokens} in, ${event.usage.outputTokens} out`);
      console.log(event.status === 'completed' ? `reply: ${event.text}` : `no reply (${event.status})`);
      return event.status;
    }
  }
  return 'timeout';
})();
await session.send({ text: question });
const ended = await session.waitForEnd({ timeoutMs: 120_000 });
if (ended.status !== 'ended') follow.abort();
const status = await printing;
follow.abort();
await runtime.close();
await standIn?.close();
process.exitCode = status === 'completed' ? 0 : 1;
