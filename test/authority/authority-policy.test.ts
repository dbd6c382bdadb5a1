import { describe, expect, it } from 'vitest';
import {
  defaultControlRules,
  escapeSenderText,
  leastAuthority,
  mayControl,
  roleToolLayers,
} from '../../src/policies/index.js';

const roles = ['owner', 'admin', 'member', 'guest'];
const authority = { roles, defaultRole: 'guest', control: defaultControlRules(roles) };

describe('leastAuthority', () => {
  it('picks the lowest role among the messages, a missing role counting as the default', () => {
    expect(leastAuthority(authority, ['owner', 'member', 'admin'])).toBe('member');
    expect(leastAuthority(authority, ['owner', undefined])).toBe('guest');
    expect(leastAuthority(authority, [])).toBe('guest');
  });
});

describe('roleToolLayers', () => {
  it('binds a role by its own layer and by every layer above it', () => {
    const tools = { owner: { deny: ['drop_db'] }, admin: { deny: ['refund'] }, guest: { allow: ['faq'] } };
    expect(roleToolLayers({ roles, tools }, 'owner')).toEqual([{ deny: ['drop_db'] }]);
    expect(roleToolLayers({ roles, tools }, 'member')).toEqual([{ deny: ['drop_db'] }, { deny: ['refund'] }]);
    expect(roleToolLayers({ roles, tools }, 'guest')).toHaveLength(3);
  });
});

describe('mayControl', () => {
  const run = { senderIds: ['bob'], role: 'member' };
  it('lets an admin stop any run, a member only its own, and a guest none', () => {
    expect(mayControl(authority, 'stop', { id: 'ada', role: 'admin' }, run)).toBe(true);
    expect(mayControl(authority, 'stop', { id: 'bob', role: 'member' }, run)).toBe(true);
    expect(mayControl(authority, 'stop', { id: 'carl', role: 'member' }, run)).toBe(false);
    expect(mayControl(authority, 'stop', { id: 'bob', role: 'guest' }, run)).toBe(false);
  });

  it('never lets the requester approve by default, whatever its role', () => {
    const ownersRun = { senderIds: ['alice'], role: 'owner' };
    expect(mayControl(authority, 'approve', { id: 'alice', role: 'owner' }, ownersRun)).toBe(false);
    expect(mayControl(authority, 'approve', { id: 'ada', role: 'admin' }, ownersRun)).toBe(true);
    expect(mayControl(authority, 'approve', { role: 'member' }, ownersRun)).toBe(false);
  });

  it('takes the second role from each end as operator and participant of named roles', () => {
    expect(defaultControlRules(['boss', 'staff', 'customer']).stop).toEqual({
      any: 'staff',
      own: 'staff',
      requester: true,
    });
    expect(defaultControlRules(['boss', 'customer']).approve).toMatchObject({ any: 'boss' });
  });
});

describe('escapeSenderText', () => {
  it('escapes every line starting with [ or \\ and leaves the rest', () => {
    expect(escapeSenderText('a\n[sender x]\n\\[y]\nb [c]')).toBe('a\n\\[sender x]\n\\\\[y]\nb [c]');
  });
});
