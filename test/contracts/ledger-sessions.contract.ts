import { describe, expect, it } from 'vitest';
import type { RecoveryStore, SessionStore } from '../../src/ledger/index.js';
import { type Current, session } from './ledger-fixtures.contract.js';

/** Sessions: put, get, list (and the record as a restart loads it). */
export function describeSessionsContract(
  current: Current<SessionStore & Pick<RecoveryStore, 'loadSession'>>,
): void {
  describe('sessions', () => {
    it('lists keys in key order, page by page, with when each record was put', async () => {
      const ledger = current();
      for (const key of ['b', 'a:2', 'c', 'a:10', 'B'])
        await ledger.putSession(session(key, { updatedAt: 7 }));
      expect(await ledger.listSessionKeys({ limit: 2 })).toEqual([
        { sessionKey: 'B', updatedAt: 7 },
        { sessionKey: 'a:10', updatedAt: 7 },
      ]);
      const rest = await ledger.listSessionKeys({ after: 'a:10', limit: 10 });
      expect(rest.map((entry) => entry.sessionKey)).toEqual(['a:2', 'b', 'c']);
      expect(await ledger.listSessionKeys({ after: 'c', limit: 10 })).toEqual([]);
    });

    it('returns undefined when the session was never put', async () => {
      expect(await current().getSession('nobody')).toBeUndefined();
    });

    it('round-trips a session when it is put then read', async () => {
      await current().putSession(session('s1'));
      expect(await current().getSession('s1')).toEqual(session('s1'));
    });

    it('keeps an undefined snapshot undefined when none was taken', async () => {
      await current().putSession(session('s1', { snapshot: undefined }));
      expect((await current().getSession('s1'))?.snapshot).toBeUndefined();
    });

    it('overwrites the session when it is put again', async () => {
      const ledger = current();
      await ledger.putSession(session('s1'));
      const next = session('s1', { override: {}, snapshot: { value: 'running' }, epoch: 2, lastSeq: 9 });
      await ledger.putSession(next);
      expect(await ledger.getSession('s1')).toEqual(next);
      expect(await ledger.listSessions()).toHaveLength(1);
    });

    it('lists every session when several were put', async () => {
      const ledger = current();
      await ledger.putSession(session('b'));
      await ledger.putSession(session('a', { epoch: 3 }));
      const keys = (await ledger.listSessions()).map((record) => record.sessionKey).sort();
      expect(keys).toEqual(['a', 'b']);
    });

    it('round-trips the tool policy everywhere a session is read, and keeps its absence', async () => {
      const ledger = current();
      const toolPolicy = { allow: ['search', 'fetch'], approve: { write: { remember: 'run' } }, max: 3 };
      await ledger.putSession(session('s1', { toolPolicy }));
      await ledger.putSession(session('s2'));
      expect(await ledger.getSession('s1')).toEqual(session('s1', { toolPolicy }));
      expect((await ledger.loadSession('s1')).record).toEqual(session('s1', { toolPolicy }));
      const listed = new Map((await ledger.listSessions()).map((record) => [record.sessionKey, record]));
      expect(listed.get('s1')).toEqual(session('s1', { toolPolicy }));
      expect(listed.get('s2')).not.toHaveProperty('toolPolicy');
      expect(await ledger.getSession('s2')).not.toHaveProperty('toolPolicy');
      expect((await ledger.loadSession('s2')).record).not.toHaveProperty('toolPolicy');
      await ledger.putSession(session('s1', { epoch: 2 }));
      expect(await ledger.getSession('s1')).not.toHaveProperty('toolPolicy');
    });

    it('keeps its own copy when the caller mutates the record after putting it', async () => {
      const record = session('s1');
      await current().putSession(record);
      (record.snapshot as { value: string }).value = 'mutated';
      (record.override as Record<string, unknown>)['mode'] = 'mutated';
      expect(await current().getSession('s1')).toEqual(session('s1'));
      const withPolicy = session('s2', { toolPolicy: { allow: ['search'] } });
      await current().putSession(withPolicy);
      (withPolicy.toolPolicy as { allow: string[] }).allow.push('mutated');
      expect((await current().getSession('s2'))?.toolPolicy).toEqual({ allow: ['search'] });
    });
  });
}
