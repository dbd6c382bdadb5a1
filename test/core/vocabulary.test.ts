import {
  failureReasons as publicFailureReasons,
  thinkingLevels as publicThinkingLevels,
} from 'agentlanes/providers';
import { inboxStatuses as publicInboxStatuses, pausedRunStatuses } from 'agentlanes/ledger';
import { parseRuntimeEvent } from 'agentlanes';
import { pauseStates as publicPauseStates, runStatuses as publicRunStatuses } from 'agentlanes/events';
import { queueModes as publicQueueModes } from 'agentlanes/queue';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { dispositions } from '../../src/core/dispositions.js';
import { failureReasons } from '../../src/core/failure-reasons.js';
import { inboxStatuses } from '../../src/core/inbox-statuses.js';
import { pauseStates } from '../../src/core/pause-states.js';
import { queueModes } from '../../src/core/queue-modes.js';
import { openRunStatuses, recordedRunStatuses, runStatuses } from '../../src/core/run-statuses.js';
import { thinkingLevels } from '../../src/core/thinking-levels.js';
import { toolSkipReasons } from '../../src/core/tool-skip-reasons.js';
import { isRuntimeError } from '../../src/core/errors.js';
import { toInboxRecord, toRunRecord, type InboxRow, type RunRow } from '../../src/ledger/sql/rows.js';

const envelope = { sessionKey: 'chat:1', seq: 1, cursor: 1, at: 0 };

const received = (fields: Record<string, unknown>) =>
  parseRuntimeEvent({
    type: 'message.received',
    ...envelope,
    messageId: 'm1',
    text: 'hi',
    mode: 'collect',
    disposition: 'started',
    ...fields,
  });

/** One event of each type whose payload has a field from the vocabulary, valid as given. */
const closedFields = [
  ['message.received', 'mode', { messageId: 'm1', text: 'hi', mode: 'collect', disposition: 'started' }],
  [
    'message.received',
    'disposition',
    { messageId: 'm1', text: 'hi', mode: 'collect', disposition: 'started' },
  ],
  [
    'failover.rotated',
    'reason',
    { provider: 'p', model: 'm', fromProfile: 'a', toProfile: 'b', reason: 'rate_limit' },
  ],
  [
    'failover.fallback',
    'reason',
    { fromProvider: 'p', fromModel: 'm', toProvider: 'q', toModel: 'n', reason: 'timeout' },
  ],
  ['profile.cooldown', 'reason', { profileId: 'a', reason: 'billing', until: 5 }],
  ['thinking.lowered', 'from', { model: 'm', from: 'high', to: 'medium' }],
  ['thinking.lowered', 'to', { model: 'm', from: 'high', to: 'medium' }],
  ['tool.skipped', 'reason', { toolCallId: 'c1', tool: 't', reason: 'steered' }],
  ['message.dropped', 'reason', { messageId: 'm1', reason: 'cap_old' }],
  ['run.paused', 'state', { state: 'awaiting_approval', toolCallIds: ['c1'] }],
] as const;

const inboxRow: InboxRow = {
  session_key: 'chat:1',
  ord: 1,
  message_id: 'm1',
  text: 'hi',
  mode: 'collect',
  status: 'pending',
  accepted_at: 0,
  sender_id: null,
  channel: null,
  thread: null,
  run_id: null,
  summary: null,
};

const runRow: RunRow = {
  run_id: 'r1',
  session_key: 'chat:1',
  status: 'running',
  message_ids: '["m1"]',
  provider: 'p',
  model: 'm',
  started_at: 0,
  ended_at: null,
  error_code: null,
  error_message: null,
  input_tokens: 0,
  output_tokens: 0,
  cost: null,
  text: '',
  parent_run_id: null,
  parent_call_id: null,
};

function corruption(read: () => unknown): string {
  try {
    read();
  } catch (error) {
    if (isRuntimeError(error, 'ledger_corrupt')) return error.message;
    throw error;
  }
  throw new Error('the row was read');
}

describe('the closed vocabulary of events', () => {
  it.each(closedFields)('parses %s when its %s is in the vocabulary', (type, _field, payload) => {
    expect(parseRuntimeEvent({ type, ...envelope, ...payload }).type).toBe(type);
  });

  it.each(closedFields)('refuses %s when its %s is outside the vocabulary', (type, field, payload) => {
    expect(() => parseRuntimeEvent({ type, ...envelope, ...payload, [field]: 'made_up' })).toThrow();
  });

  it('accepts every queue mode and every disposition on message.received when each is in the vocabulary', () => {
    for (const mode of queueModes) expect(received({ mode })).toMatchObject({ mode });
    for (const disposition of dispositions) expect(received({ disposition })).toMatchObject({ disposition });
  });

  it('accepts every failure reason, thinking level and skip reason when each is in the vocabulary', () => {
    for (const reason of failureReasons) {
      const event = { type: 'profile.cooldown', ...envelope, profileId: 'a', reason, until: 1 };
      expect(parseRuntimeEvent(event)).toMatchObject({ reason });
    }
    for (const level of thinkingLevels) {
      const event = { type: 'thinking.lowered', ...envelope, model: 'm', from: level, to: level };
      expect(parseRuntimeEvent(event)).toMatchObject({ from: level });
    }
    for (const reason of toolSkipReasons) {
      const event = { type: 'tool.skipped', ...envelope, toolCallId: 'c', tool: 't', reason };
      expect(parseRuntimeEvent(event)).toMatchObject({ reason });
    }
  });
});

describe('the closed vocabulary of ledger rows', () => {
  it('reads an inbox row when its mode and status are in the vocabulary', () => {
    for (const mode of queueModes) expect(toInboxRecord({ ...inboxRow, mode }).mode).toBe(mode);
    for (const status of inboxStatuses) expect(toInboxRecord({ ...inboxRow, status }).status).toBe(status);
  });

  it('refuses an inbox row as corrupt when its mode is outside the vocabulary', () => {
    expect(corruption(() => toInboxRecord({ ...inboxRow, mode: 'shout' }))).toContain('unknown mode "shout"');
  });

  it('reads a run row when its status is open or ended, and refuses it when it is neither', () => {
    for (const status of recordedRunStatuses) expect(toRunRecord({ ...runRow, status }).status).toBe(status);
    expect(corruption(() => toRunRecord({ ...runRow, status: 'paused' }))).toContain('unknown status');
  });
});

describe('the vocabulary in core', () => {
  it('is what the public names export when read from the package', () => {
    expect(publicQueueModes).toBe(queueModes);
    expect(publicFailureReasons).toBe(failureReasons);
    expect(publicThinkingLevels).toBe(thinkingLevels);
    expect(publicInboxStatuses).toBe(inboxStatuses);
    expect(publicRunStatuses).toBe(runStatuses);
    expect(publicPauseStates).toBe(pauseStates);
    expect(pausedRunStatuses).toBe(pauseStates);
  });

  it('lists the open run statuses as running and the pause states when read', () => {
    expect(openRunStatuses).toEqual(['running', ...pauseStates]);
    expect(recordedRunStatuses).toEqual([...openRunStatuses, ...runStatuses]);
  });
});

describe('the lint of switches over the vocabulary', () => {
  it('does not take a default case for exhaustive when a switch covers a closed union', async () => {
    const config = (await new ESLint().calculateConfigForFile('src/cli/describe-event.ts')) as {
      rules: Record<string, unknown>;
    };
    expect(config.rules['@typescript-eslint/switch-exhaustiveness-check']).toEqual([
      2,
      expect.objectContaining({ considerDefaultExhaustiveForUnions: false }),
    ]);
  });
});
