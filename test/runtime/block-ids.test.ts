import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from 'agentlanes';
import { createHarness } from '../support/runtime-harness.js';

const refund = defineTool({
  name: 'refund',
  description: 'Refund an order',
  risk: 'high',
  input: z.object({ orderId: z.string() }),
  execute: () => ({ refunded: true }),
});

describe('assistant.block ids', () => {
  it('are <runId>:<index> and stay unique when a paused run resumes', async () => {
    const h = createHarness(
      [
        {
          text: 'Let me look into that refund for you.',
          toolCalls: [{ id: 'call-1', name: 'refund', args: { orderId: 'A1' } }],
        },
        { text: 'The refund is done. Anything else?' },
      ],
      { tools: [refund], blocks: { minChars: 10, maxChars: 40 } },
    );
    const chat = h.runtime.session('telegram:1');
    const sent = await chat.send('refund A1');
    expect(await chat.waitForEnd()).toMatchObject({ status: 'paused' });
    await chat.approve({ toolCallId: 'call-1', decision: 'approve' });
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    await h.clock.advance(0);
    const blocks = h.of('assistant.block');
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    expect(blocks.map((block) => block.index)).toEqual(blocks.map((_, index) => index));
    expect(blocks.map((block) => block.blockId)).toEqual(blocks.map((_, index) => `${sent.runId}:${index}`));
    expect(blocks.map((block) => block.text).join(' ')).toContain('The refund is done.');
    await h.close();
  });
});
