import { describe, expect, it } from 'vitest';
import { fakeClock } from 'agentlanes/testing';
import { createTelegramRoles } from '../../src/adapters/grammy/telegram-roles.js';

/** A Bot API stand-in answering getChatAdministrators from a table, counting the calls per chat. */
function administratorsApi(table: Record<number, { id: number; status: 'creator' | 'administrator' }[]>) {
  const asked: number[] = [];
  let failing = false;
  const api = {
    getChatAdministrators(chatId: number | string) {
      asked.push(Number(chatId));
      if (failing) return Promise.reject(new Error('Bad Request: chat not found'));
      const members = (table[Number(chatId)] ?? []).map(({ id, status }) => ({
        status,
        user: { id, is_bot: false, first_name: `user ${id}` },
      }));
      return Promise.resolve(members as never);
    },
  };
  return { api, asked, fail: () => (failing = true) };
}

const group = (id: number) => ({ id, type: 'supergroup' as const });

describe('createTelegramRoles', () => {
  it('maps creator, administrators and everyone else, and a private chat to owner', async () => {
    const { api } = administratorsApi({
      [-1]: [
        { id: 1, status: 'creator' },
        { id: 2, status: 'administrator' },
      ],
    });
    const roles = createTelegramRoles(api, {}, fakeClock({ now: 0 }), () => undefined);
    expect(await roles.roleOf({ id: 1, name: 'a' }, group(-1))).toBe('owner');
    expect(await roles.roleOf({ id: 2, name: 'b' }, group(-1))).toBe('admin');
    expect(await roles.roleOf({ id: 3, name: 'c' }, group(-1))).toBe('member');
    expect(await roles.roleOf({ id: 3, name: 'c' }, { id: 3, type: 'private' })).toBe('owner');
  });

  it('asks again only after the TTL on the injected clock, and keeps at most cacheSize chats', async () => {
    const { api, asked } = administratorsApi({});
    const clock = fakeClock({ now: 0 });
    const roles = createTelegramRoles(api, { cacheTtlMs: 1000, cacheSize: 2 }, clock, () => undefined);
    const user = { id: 9, name: 'n' };
    await roles.roleOf(user, group(-1));
    await roles.roleOf(user, group(-1));
    expect(asked).toEqual([-1]);
    await clock.advance(1000);
    await roles.roleOf(user, group(-1));
    expect(asked).toEqual([-1, -1]);
    await roles.roleOf(user, group(-2));
    await roles.roleOf(user, group(-3));
    // -1 was the least recently used of three: dropped, so it is asked again.
    await roles.roleOf(user, group(-1));
    expect(asked).toEqual([-1, -1, -2, -3, -1]);
  });

  it('gives the member role, never more, when the lookup fails, and reports the failure', async () => {
    const { api, fail } = administratorsApi({ [-1]: [{ id: 1, status: 'creator' }] });
    fail();
    const errors: unknown[] = [];
    const roles = createTelegramRoles(api, {}, fakeClock({ now: 0 }), (error) => errors.push(error));
    expect(await roles.roleOf({ id: 1, name: 'a' }, group(-1))).toBe('member');
    expect(errors).toHaveLength(1);
  });
});
