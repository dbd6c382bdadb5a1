import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import { needsApproval } from '../../src/policies/approval-rules.js';
import type { ApprovalInput } from '../../src/policies/approval-rules.js';

const nothingRemembered = { run: [], session: [] };

describe('needsApproval', () => {
  const table: ReadonlyArray<{ condition: string; input: ApprovalInput; expected: boolean }> = [
    {
      condition: 'the tool is low risk and not listed',
      input: { tool: 'read_file', risk: 'low', remembered: nothingRemembered },
      expected: false,
    },
    {
      condition: 'the tool is high risk and nothing is remembered',
      input: { tool: 'exec', risk: 'high', remembered: nothingRemembered },
      expected: true,
    },
    {
      condition: 'the high-risk tool was remembered for the run',
      input: { tool: 'exec', risk: 'high', remembered: { run: ['exec'], session: [] } },
      expected: false,
    },
    {
      condition: 'the high-risk tool was remembered for the session',
      input: { tool: 'exec', risk: 'high', remembered: { run: [], session: ['exec'] } },
      expected: false,
    },
    {
      condition: 'a different tool was remembered',
      input: { tool: 'exec', risk: 'high', remembered: { run: ['write_file'], session: ['read_file'] } },
      expected: true,
    },
    {
      condition: 'the low-risk tool is named in alwaysApprove',
      input: {
        tool: 'send_message',
        risk: 'low',
        alwaysApprove: ['send_message'],
        remembered: nothingRemembered,
      },
      expected: true,
    },
    {
      condition: 'the low-risk tool matches a glob in alwaysApprove',
      input: { tool: 'web_fetch', risk: 'low', alwaysApprove: ['web_*'], remembered: nothingRemembered },
      expected: true,
    },
    {
      condition: 'alwaysApprove lists other tools only',
      input: {
        tool: 'read_file',
        risk: 'low',
        alwaysApprove: ['web_*', 'exec'],
        remembered: nothingRemembered,
      },
      expected: false,
    },
    {
      condition: 'the tool listed in alwaysApprove was remembered for the session',
      input: {
        tool: 'web_fetch',
        risk: 'low',
        alwaysApprove: ['web_*'],
        remembered: { run: [], session: ['web_fetch'] },
      },
      expected: false,
    },
    {
      condition: 'only a glob was remembered, since remembered entries are exact names',
      input: { tool: 'web_fetch', risk: 'high', remembered: { run: ['web_*'], session: [] } },
      expected: true,
    },
  ];

  it.each(table)('returns $expected when $condition', ({ input, expected }) => {
    expect(needsApproval(input)).toBe(expected);
  });

  it('throws invalid_input when alwaysApprove holds a group entry', () => {
    expect.assertions(1);
    try {
      needsApproval({
        tool: 'exec',
        risk: 'low',
        alwaysApprove: ['group:ops'],
        remembered: nothingRemembered,
      });
    } catch (error) {
      expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    }
  });
});
