import { describe, expect, it } from 'vitest';
import { createSqliteLedger } from 'agentlanes';
import { fakeClock } from 'agentlanes/testing';
import { createInboundDedupe, redeliveryWindowMs } from '../../src/adapters/delivery/inbound-dedupe.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

const hour = 60 * 60_000;

describe('createInboundDedupe (an adapter remembering the platform messages it handled)', () => {
  it('answers seen for a redelivery within 48 hours, also from a new dedupe on the same ledger file', async () => {
    const path = tempLedgerPath('inbound-dedupe');
    const clock = fakeClock({ now: 1_000_000 });
    const ledger = createSqliteLedger({ path });
    const dedupe = createInboundDedupe({ store: ledger, consumer: 'tg', clock });
    expect(await dedupe.seen('telegram:1', 'u1')).toBe(false);
    await dedupe.remember('telegram:1', 'u1');
    await clock.advance(redeliveryWindowMs - 1);
    await ledger.close();

    const reopened = createSqliteLedger({ path });
    const again = createInboundDedupe({ store: reopened, consumer: 'tg', clock });
    expect(await again.seen('telegram:1', 'u1')).toBe(true);
    expect(await again.seen('telegram:2', 'u1')).toBe(false);
    await clock.advance(1);
    expect(await again.seen('telegram:1', 'u1')).toBe(false);
    await reopened.close();
  });

  it('deletes the records past the window at most once an hour, so they do not pile up for good', async () => {
    const clock = fakeClock({ now: 1_000_000 });
    const ledger = createSqliteLedger({ path: tempLedgerPath('inbound-dedupe') });
    const forgets: number[] = [];
    const store = {
      getConsumer: ledger.getConsumer.bind(ledger),
      putConsumer: ledger.putConsumer.bind(ledger),
      forgetConsumers: async (prefix: string, before: number) => {
        const forgotten = await ledger.forgetConsumers(prefix, before);
        forgets.push(forgotten);
        return forgotten;
      },
    };
    const dedupe = createInboundDedupe({ store, consumer: 'tg', clock });
    await dedupe.remember('telegram:1', 'old');
    expect(forgets).toEqual([0]);
    await clock.advance(redeliveryWindowMs + hour);
    await dedupe.remember('telegram:1', 'new');
    await clock.advance(0);
    // The old record went with the first message handled after an hour; the new one stays.
    expect(forgets).toEqual([0, 1]);
    expect(await ledger.getConsumer('tg:inbound:old', 'telegram:1')).toBeUndefined();
    expect(await dedupe.seen('telegram:1', 'new')).toBe(true);
    await dedupe.remember('telegram:1', 'newer');
    expect(forgets).toHaveLength(2);
    await ledger.close();
  });
});
