import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from 'agentlanes';
import { createHarness } from '../support/runtime-harness.js';

/** The first event of `events`, or the error its first step throws. */
async function firstStep(events: AsyncIterable<RuntimeEvent>): Promise<unknown> {
  const iterator = events[Symbol.asyncIterator]();
  try {
    return (await iterator.next()).value;
  } catch (error) {
    return error;
  } finally {
    await iterator.return?.();
  }
}

describe('events({ after })', () => {
  it('refuses with invalid_input when the cursor is past the end of the log', async () => {
    const h = createHarness([{ text: 'hello there' }]);
    await h.runtime.session('web:a').send({ id: 'm1', text: 'hi' });
    await h.runtime.session('web:a').waitForEnd();
    await h.settled();
    const last = h.runtime.eventCursor();
    expect(last).toBeGreaterThan(0);

    await expect(firstStep(h.runtime.events({ after: last + 1 }))).resolves.toMatchObject({
      code: 'invalid_input',
      details: { after: last + 1, last },
    });
    await expect(firstStep(h.runtime.session('web:a').events({ after: last + 50 }))).resolves.toMatchObject({
      code: 'invalid_input',
    });
    await h.close();
  });

  it('accepts the last cursor and follows from there when the cursor is the end of the log', async () => {
    const h = createHarness([{ text: 'hello there' }, { text: 'again' }]);
    const session = h.runtime.session('web:a');
    await session.send({ id: 'm1', text: 'hi' });
    await session.waitForEnd();
    await h.settled();
    const last = h.runtime.eventCursor();
    const stream = h.runtime.events({ after: last })[Symbol.asyncIterator]();
    const next = stream.next();
    await session.send({ id: 'm2', text: 'more' });
    await expect(next).resolves.toMatchObject({ value: { type: 'message.received', cursor: last + 1 } });
    await stream.return?.();
    await h.close();
  });
});
