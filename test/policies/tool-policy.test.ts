import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import { isToolAllowed, resolveToolPolicy } from '../../src/policies/tool-policy.js';
import type { ToolPolicyLayer } from '../../src/policies/tool-policy.js';

const tools = ['read_file', 'write_file', 'exec', 'web_search', 'web_fetch', 'send_message'];
const groups = { fs: ['read_file', 'write_file'], web: ['web_*'] };

describe('resolveToolPolicy', () => {
  const table: ReadonlyArray<{
    name: string;
    layers: ToolPolicyLayer[];
    allowed: string[];
  }> = [
    { name: 'allows every tool when there are no layers', layers: [], allowed: tools },
    { name: 'allows every tool when the allow list is empty', layers: [{ allow: [] }], allowed: tools },
    {
      name: 'removes only denied tools when allow is missing',
      layers: [{ deny: ['exec'] }],
      allowed: ['read_file', 'write_file', 'web_search', 'web_fetch', 'send_message'],
    },
    {
      name: 'lets deny win when a tool is both allowed and denied in one layer',
      layers: [{ allow: ['exec', 'read_file'], deny: ['exec'] }],
      allowed: ['read_file'],
    },
    { name: 'allows everything when allow is *', layers: [{ allow: ['*'] }], allowed: tools },
    { name: 'denies everything when deny is *', layers: [{ allow: ['*'], deny: ['*'] }], allowed: [] },
    {
      name: 'matches by prefix when the entry is web_*',
      layers: [{ allow: ['web_*'] }],
      allowed: ['web_search', 'web_fetch'],
    },
    {
      name: 'expands the group when an entry is group:fs',
      layers: [{ allow: ['group:fs', 'exec'] }],
      allowed: ['read_file', 'write_file', 'exec'],
    },
    {
      name: 'expands globs inside a group when the group holds web_*',
      layers: [{ deny: ['group:web'] }],
      allowed: ['read_file', 'write_file', 'exec', 'send_message'],
    },
    {
      name: 'keeps exec denied when a later layer allows it again',
      layers: [{ deny: ['exec'] }, { allow: ['exec'] }],
      allowed: [],
    },
    {
      name: 'keeps web_fetch out when a later layer allows web_* after an earlier allow-list left it out',
      layers: [{ allow: ['web_search', 'read_file'] }, { allow: ['web_*'] }],
      allowed: ['web_search'],
    },
    {
      name: 'narrows each time when runtime, agent and subagent layers apply in order',
      layers: [
        { deny: ['send_message'] },
        { allow: ['group:fs', 'group:web', 'exec'] },
        { deny: ['write_file', 'exec'] },
      ],
      allowed: ['read_file', 'web_search', 'web_fetch'],
    },
    {
      name: 'ignores entries naming tools that are not offered',
      layers: [{ allow: ['read_file', 'delete_everything'] }],
      allowed: ['read_file'],
    },
  ];

  it.each(table)('$name', ({ layers, allowed }) => {
    const resolved = resolveToolPolicy(tools, layers, groups);
    expect(resolved.allowed).toEqual(allowed);
    expect(resolved.denied).toEqual(tools.filter((tool) => !allowed.includes(tool)));
  });

  it('keeps the input order of tools when the allow list is in another order', () => {
    const resolved = resolveToolPolicy(tools, [{ allow: ['send_message', 'exec', 'read_file'] }]);
    expect(resolved).toEqual({
      allowed: ['read_file', 'exec', 'send_message'],
      denied: ['write_file', 'web_search', 'web_fetch'],
    });
  });

  it('lists a duplicated tool once when tools repeats a name', () => {
    expect(resolveToolPolicy(['exec', 'read_file', 'exec'], [{ deny: ['exec'] }])).toEqual({
      allowed: ['read_file'],
      denied: ['exec'],
    });
  });

  const invalid: ReadonlyArray<{ name: string; layers: ToolPolicyLayer[]; mentions: string }> = [
    { name: 'an unknown group is allowed', layers: [{ allow: ['group:admin'] }], mentions: 'admin' },
    { name: 'an unknown group is denied', layers: [{ deny: ['group:admin'] }], mentions: 'admin' },
    {
      name: 'an unknown group sits in a layer after everything was removed',
      layers: [{ deny: ['*'] }, { allow: ['group:ops'] }],
      mentions: 'ops',
    },
    { name: 'a star is not at the end', layers: [{ allow: ['web_*_v2'] }], mentions: 'web_*_v2' },
    { name: 'an entry is empty', layers: [{ deny: [''] }], mentions: 'empty' },
  ];

  it.each(invalid)('throws invalid_input naming the culprit when $name', ({ layers, mentions }) => {
    expect.assertions(2);
    try {
      resolveToolPolicy(tools, layers, groups);
    } catch (error) {
      expect(isRuntimeError(error, 'invalid_input')).toBe(true);
      expect((error as Error).message).toContain(mentions);
    }
  });

  it('throws invalid_input when a group refers to another group', () => {
    expect(() => resolveToolPolicy(tools, [{ allow: ['group:all'] }], { all: ['group:fs'] })).toThrow(
      /groups are not allowed/,
    );
  });

  const names = ['a', 'b', 'exec', 'web_a', 'web_b', 'x_1'];
  const entry = fc.constantFrom(...names, '*', 'web_*', 'x_*', 'group:g');
  const layer = fc.record(
    { allow: fc.array(entry, { maxLength: 3 }), deny: fc.array(entry, { maxLength: 3 }) },
    { requiredKeys: [] },
  );
  const propertyGroups = { g: ['a', 'web_b'] };

  it('never allows a tool that was not allowed before when a layer is added', () => {
    fc.assert(
      fc.property(fc.subarray(names), fc.array(layer, { maxLength: 4 }), layer, (offered, layers, extra) => {
        const before = resolveToolPolicy(offered, layers, propertyGroups);
        const after = resolveToolPolicy(offered, [...layers, extra], propertyGroups);
        for (const tool of after.allowed) expect(before.allowed).toContain(tool);
      }),
    );
  });

  it('splits tools into disjoint allowed and denied lists when layers are arbitrary', () => {
    fc.assert(
      fc.property(fc.subarray(names), fc.array(layer, { maxLength: 4 }), (offered, layers) => {
        const { allowed, denied } = resolveToolPolicy(offered, layers, propertyGroups);
        expect(allowed.filter((tool) => denied.includes(tool))).toEqual([]);
        expect([...allowed, ...denied].sort()).toEqual([...offered].sort());
      }),
    );
  });
});

describe('isToolAllowed', () => {
  const resolved = resolveToolPolicy(tools, [{ allow: ['web_*'] }]);

  it.each([
    { tool: 'web_search', expected: true, condition: 'the tool survived the layers' },
    { tool: 'exec', expected: false, condition: 'a layer removed the tool' },
    { tool: 'web_delete', expected: false, condition: 'the tool was never offered though a glob matches' },
    { tool: 'web_*', expected: false, condition: 'the name is a glob rather than a tool' },
  ])('returns $expected when $condition', ({ tool, expected }) => {
    expect(isToolAllowed(tool, resolved)).toBe(expected);
  });
});
