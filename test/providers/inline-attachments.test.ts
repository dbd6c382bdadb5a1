import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { anthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import type { ModelPart, ModelRequest } from '../../src/providers/model-provider.js';
import { openaiProvider } from '../../src/providers/openai/openai-provider.js';
import { startSseServer, type SseServer } from '../support/sse-server.js';

const image = {
  kind: 'image',
  mediaType: 'image/png',
  name: 'cat.png',
  sha256: 'a'.repeat(64),
  data: 'iVBORw0K',
} as const;
const audio = {
  kind: 'audio',
  mediaType: 'audio/mpeg',
  name: 'note.mp3',
  sha256: 'b'.repeat(64),
  data: 'SUQz',
} as const;
const wav = {
  kind: 'audio',
  mediaType: 'audio/wav',
  name: 'note.wav',
  sha256: 'c'.repeat(64),
  data: 'UklG',
} as const;
const pdf = {
  kind: 'pdf',
  mediaType: 'application/pdf',
  name: 'doc.pdf',
  sha256: 'd'.repeat(64),
  data: 'JVBERi0=',
} as const;

function requestWith(
  model: string,
  attachments: ModelRequest['messages'][number] & { role: 'user' },
): ModelRequest {
  return { model, messages: [attachments], tools: [] };
}

async function drain(stream: AsyncIterable<ModelPart>): Promise<void> {
  for await (const _part of stream) {
    // only the request matters here
  }
}

const openaiDone = {
  sse: [
    {
      data: {
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'gpt-4o',
        choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }],
      },
    },
    { data: '[DONE]' },
  ],
};

const anthropicDone = {
  sse: [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id: 'm',
          type: 'message',
          role: 'assistant',
          content: [],
          model: 'claude-x',
          stop_reason: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      },
    },
    {
      event: 'message_delta',
      data: { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ],
};

let server: SseServer;
beforeEach(async () => {
  server = await startSseServer();
});
afterEach(async () => {
  await server.close();
});
const signal = new AbortController().signal;

describe('openaiProvider with inline attachments', () => {
  it('sends an image as an image_url data URL part after the text', async () => {
    server.enqueue(openaiDone);
    const provider = openaiProvider({ baseURL: server.url, apiKey: 'k' });
    await drain(
      provider.stream(
        requestWith('gpt-4o', { role: 'user', content: 'what is this?', attachments: [image] }),
        { signal },
      ),
    );
    expect((server.requests[0]?.body as { messages: unknown }).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } },
        ],
      },
    ]);
  });

  it('sends audio as input_audio (mp3 or wav) and a PDF as a file part with its name', async () => {
    server.enqueue(openaiDone);
    const provider = openaiProvider({ baseURL: server.url, apiKey: 'k' });
    await drain(
      provider.stream(
        requestWith('gpt-4o-audio-preview', { role: 'user', content: '', attachments: [audio, wav, pdf] }),
        { signal },
      ),
    );
    expect((server.requests[0]?.body as { messages: unknown }).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'input_audio', input_audio: { data: 'SUQz', format: 'mp3' } },
          { type: 'input_audio', input_audio: { data: 'UklG', format: 'wav' } },
          { type: 'file', file: { filename: 'doc.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
        ],
      },
    ]);
  });

  it('declares what its models take inline', () => {
    const provider = openaiProvider({ apiKey: 'k' });
    expect(provider.inlineCapabilities?.find((row) => row.model === 'gpt-4o*')?.accepts).toEqual([
      'image',
      'pdf',
    ]);
  });
});

describe('anthropicProvider with inline attachments', () => {
  it('sends an image as an image block and a PDF as a document block, both with base64 sources', async () => {
    server.enqueue(anthropicDone);
    const provider = anthropicProvider({ baseURL: server.url, apiKey: 'k' });
    await drain(
      provider.stream(requestWith('claude-x', { role: 'user', content: 'look', attachments: [image, pdf] }), {
        signal,
      }),
    );
    expect((server.requests[0]?.body as { messages: unknown }).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0K' } },
          {
            type: 'document',
            source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
            title: 'doc.pdf',
          },
        ],
      },
    ]);
  });

  it('refuses audio, which no Anthropic model takes, without calling the API', async () => {
    const provider = anthropicProvider({ baseURL: server.url, apiKey: 'k' });
    await expect(
      drain(
        provider.stream(requestWith('claude-x', { role: 'user', content: 'x', attachments: [audio] }), {
          signal,
        }),
      ),
    ).rejects.toMatchObject({ code: 'unsupported_content' });
    expect(server.requests).toHaveLength(0);
  });
});
