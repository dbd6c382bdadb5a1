import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  channelOf,
  defaultQueueSettings,
  dropPolicies,
  queueModes,
  queueSettingsSchema,
  resolveQueueSettings,
} from '../../src/policies/queue-settings.js';
import type { QueueSettingsInput } from '../../src/policies/queue-settings.js';

describe('defaultQueueSettings', () => {
  it('matches the built-in defaults when nothing is configured', () => {
    expect(defaultQueueSettings).toEqual({
      mode: 'collect',
      debounceMs: 1000,
      maxWaitMs: 5000,
      cap: 20,
      drop: 'summarize',
    });
  });
});

describe('queueSettingsSchema', () => {
  it('accepts a partial override when only some fields are set', () => {
    expect(queueSettingsSchema.parse({ debounceMs: 0 })).toEqual({ debounceMs: 0 });
  });

  it('accepts the queue alias when it is given as mode', () => {
    expect(queueSettingsSchema.parse({ mode: 'queue' })).toEqual({ mode: 'queue' });
  });

  it('rejects a cap below one when cap is 0', () => {
    expect(queueSettingsSchema.safeParse({ cap: 0 }).success).toBe(false);
  });

  it('rejects negative or fractional durations when they are given', () => {
    expect(queueSettingsSchema.safeParse({ debounceMs: -1 }).success).toBe(false);
    expect(queueSettingsSchema.safeParse({ maxWaitMs: 1.5 }).success).toBe(false);
  });

  it('rejects unknown keys when a field is misspelt', () => {
    expect(queueSettingsSchema.safeParse({ debounce: 10 }).success).toBe(false);
  });

  it('rejects an unknown mode or drop policy when one is given', () => {
    expect(queueSettingsSchema.safeParse({ mode: 'later' }).success).toBe(false);
    expect(queueSettingsSchema.safeParse({ drop: 'oldest' }).success).toBe(false);
  });
});

describe('resolveQueueSettings', () => {
  it('returns the built-in defaults when no layer is given', () => {
    expect(resolveQueueSettings({})).toEqual(defaultQueueSettings);
  });

  it('takes each field from the highest layer that sets it when layers overlap', () => {
    const settings = resolveQueueSettings({
      message: { mode: 'steer' },
      session: { mode: 'interrupt', debounceMs: 250 },
      channel: { debounceMs: 500, cap: 5 },
      runtime: { cap: 10, drop: 'old', maxWaitMs: 9000 },
    });
    expect(settings).toEqual({ mode: 'steer', debounceMs: 250, maxWaitMs: 9000, cap: 5, drop: 'old' });
  });

  it('keeps the lower mode when a higher layer sets only debounceMs', () => {
    const settings = resolveQueueSettings({ session: { debounceMs: 0 }, channel: { mode: 'followup' } });
    expect(settings.mode).toBe('followup');
    expect(settings.debounceMs).toBe(0);
  });

  it('ignores a field when a layer sets it to undefined', () => {
    const settings = resolveQueueSettings({
      message: { mode: undefined, cap: undefined },
      runtime: { mode: 'reject' },
    });
    expect(settings.mode).toBe('reject');
    expect(settings.cap).toBe(20);
  });

  it('normalises queue to followup when the winning layer says queue', () => {
    expect(resolveQueueSettings({ message: { mode: 'queue' }, session: { mode: 'collect' } }).mode).toBe(
      'followup',
    );
    expect(resolveQueueSettings({ runtime: { mode: 'queue' } }).mode).toBe('followup');
  });

  it('uses the layer precedence message > session > channel > runtime > default for any layers', () => {
    const layer = fc.record(
      {
        mode: fc.constantFrom(...queueModes),
        debounceMs: fc.nat(10_000),
        maxWaitMs: fc.nat(60_000),
        cap: fc.integer({ min: 1, max: 100 }),
        drop: fc.constantFrom(...dropPolicies),
      },
      { requiredKeys: [] },
    );
    const names = ['message', 'session', 'channel', 'runtime'] as const;
    fc.assert(
      fc.property(fc.option(layer), fc.option(layer), fc.option(layer), fc.option(layer), (...picked) => {
        const layers: Partial<Record<(typeof names)[number], QueueSettingsInput>> = {};
        names.forEach((name, index) => {
          const value = picked[index];
          if (value !== null && value !== undefined) layers[name] = value;
        });
        const settings = resolveQueueSettings(layers);
        for (const key of ['mode', 'debounceMs', 'maxWaitMs', 'cap', 'drop'] as const) {
          const winner = names.map((name) => layers[name]?.[key]).find((value) => value !== undefined);
          const expected = winner === 'queue' ? 'followup' : (winner ?? defaultQueueSettings[key]);
          expect(settings[key]).toBe(expected);
        }
      }),
    );
  });
});

describe('channelOf', () => {
  it('returns the explicit channel when one is given', () => {
    expect(channelOf('telegram:123', 'discord')).toBe('discord');
  });

  it('returns the key prefix before the first colon when no channel is given', () => {
    expect(channelOf('telegram:123')).toBe('telegram');
    expect(channelOf('slack:T1:C2')).toBe('slack');
  });

  it('returns undefined when the key has no prefix', () => {
    expect(channelOf('session-42')).toBeUndefined();
    expect(channelOf(':123')).toBeUndefined();
  });
});
