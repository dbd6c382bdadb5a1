import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from 'agentlanes';
import { startServer, type ServerHarness } from './server-harness.js';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** The `message.received` event of message `id`, read back from the runtime's log. */
async function received(id: string): Promise<RuntimeEvent | undefined> {
  for await (const event of (harness as ServerHarness).runtime.events({ after: 0 })) {
    if (event.type === 'message.received' && event.messageId === id) return event;
  }
  return undefined;
}

describe('POST /v1/sessions/:key/messages with a traceparent header', () => {
  it('carries a well-formed W3C traceparent header to the message, as the body field does', async () => {
    harness = await startServer([{ text: 'ok' }, { text: 'ok' }]);
    const sent = await harness.request('/v1/sessions/web:1/messages', {
      method: 'POST',
      headers: { traceparent },
      json: { id: 'm1', text: 'hello' },
    });
    expect(sent.status).toBe(202);
    expect(await received('m1')).toMatchObject({ type: 'message.received', traceparent });
  });

  it('ignores a malformed traceparent header (the W3C rule) and still takes the message', async () => {
    harness = await startServer([{ text: 'ok' }]);
    const sent = await harness.request('/v1/sessions/web:1/messages', {
      method: 'POST',
      headers: { traceparent: 'not-a-trace' },
      json: { id: 'm1', text: 'hello' },
    });
    expect(sent.status).toBe(202);
    const event = await received('m1');
    expect(event).toMatchObject({ type: 'message.received' });
    expect(event).not.toHaveProperty('traceparent');
  });
});
