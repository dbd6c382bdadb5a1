import { describe, expect, it } from 'vitest';
import { createHarness } from '../support/runtime-harness.js';

describe('createRuntime globalLane rate', () => {
  it('starts the third run only after the fake clock moved one interval when the rate is 2 per second', async () => {
    const h = createHarness(() => ({ text: 'ok' }), {
      globalLane: { rate: { limit: 2, intervalMs: 1000 } },
    });
    for (const key of ['s:1', 's:2', 's:3']) await h.runtime.session(key).send({ id: key, text: 'go' });
    await h.clock.advance(0);
    const started = () => h.of('run.started').map((event) => [event.sessionKey, event.at]);
    expect(started()).toEqual([
      ['s:1', 0],
      ['s:2', 0],
    ]);
    expect(h.model.calls).toBe(2);
    await h.clock.advance(999);
    expect(h.model.calls).toBe(2);
    await h.clock.advance(1);
    expect(h.model.calls).toBe(3);
    expect(h.of('run.ended').map((event) => [event.sessionKey, event.status, event.at])).toEqual([
      ['s:1', 'completed', 0],
      ['s:2', 'completed', 0],
      ['s:3', 'completed', 1000],
    ]);
    await h.close();
  });
});
