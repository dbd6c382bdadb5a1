import { describe, expect, it } from 'vitest';
import { createMemoryLedger, type Ledger, type RuntimeEvent } from 'agentlanes';
import { type EventQuery } from 'agentlanes/ledger';
import { listSessionRows } from '../../src/cli/session-rows.js';
import { formatActivityTime, runSessionsCommand } from '../../src/cli/sessions-command.js';
import { captureOutput } from './captured-output.js';
import { recordHistory } from './recorded-history.js';

const iso = (ms: number) => new Date(ms).toISOString();
const t0 = 1_700_000_000_000;

describe('runSessionsCommand', () => {
  it('prints every session newest first with its state and counts when a runtime recorded them', async () => {
    const ledger = createMemoryLedger();
    const history = await recordHistory(ledger);
    const output = captureOutput();
    expect(await runSessionsCommand(ledger, { output })).toBe(0);
    expect(output.lines()).toEqual([
      'key             state    runs  queued  last activity',
      `telegram:carol  running     1       1  ${iso(t0 + 5_025)}`,
      `telegram:dave   idle        1       0  ${iso(t0 + 4_025)}`,
      `telegram:bob    idle        1       0  ${iso(t0 + 3_525)}`,
      `telegram:alice  idle        3       0  ${iso(t0 + 2_105)}`,
    ]);
    await history.finish();
  });

  it('shows a session as queued when its run ended and a message is still to run', async () => {
    const ledger = createMemoryLedger();
    await (await recordHistory(ledger)).finish();
    const output = captureOutput();
    await runSessionsCommand(ledger, { output });
    // Closing the runtime persisted every session, so all share the close time as their last activity.
    expect(output.lines()).toContain(`telegram:carol  queued     1       1  ${iso(t0 + 5_035)}`);
  });

  it('prints a line saying there are no sessions when the ledger is empty', async () => {
    const output = captureOutput();
    expect(await runSessionsCommand(createMemoryLedger(), { output })).toBe(0);
    expect(output.text()).toBe('no sessions in the ledger\n');
  });

  it('colours the header and the states when the output is a terminal', async () => {
    const ledger = createMemoryLedger();
    await ledger.putSession({
      sessionKey: 'k',
      override: {},
      snapshot: undefined,
      epoch: 1,
      lastSeq: 0,
      updatedAt: 0,
    });
    const output = captureOutput({ isTTY: true });
    await runSessionsCommand(ledger, { output, env: {} });
    expect(output.lines()).toEqual([
      '\x1b[1mkey  state  runs  queued  last activity\x1b[22m',
      `k    \x1b[2midle \x1b[22m     0       0  simulated +0.000s`,
    ]);
  });

  it('writes no colour on a terminal when NO_COLOR is set', async () => {
    const ledger = createMemoryLedger();
    await ledger.putSession({
      sessionKey: 'k',
      override: {},
      snapshot: undefined,
      epoch: 1,
      lastSeq: 0,
      updatedAt: 0,
    });
    const output = captureOutput({ isTTY: true });
    await runSessionsCommand(ledger, { output, env: { NO_COLOR: '1' } });
    expect(output.text()).not.toContain('\x1b[');
  });
});

function event(sessionKey: string, cursor: number, at: number): RuntimeEvent {
  return { type: 'message.duplicate', messageId: `m${cursor}`, sessionKey, seq: cursor, cursor, at };
}

describe('listSessionRows', () => {
  it('finds sessions without a sessions row from their pending messages and from the event log', async () => {
    const ledger = createMemoryLedger();
    await ledger.appendMessage({
      sessionKey: 'pending-only',
      messageId: 'p1',
      order: 1,
      text: 'hi',
      mode: 'collect',
      status: 'pending',
      acceptedAt: 5_000,
    });
    await ledger.appendEvents([event('events-only', 1, 7_000)]);
    await ledger.putSession({
      sessionKey: 'row-only',
      override: {},
      snapshot: undefined,
      epoch: 1,
      lastSeq: 0,
      updatedAt: 6_000,
    });
    expect(await listSessionRows(ledger)).toEqual([
      { key: 'events-only', state: 'idle', runs: 0, queued: 0, lastActivity: 7_000 },
      { key: 'row-only', state: 'idle', runs: 0, queued: 0, lastActivity: 6_000 },
      { key: 'pending-only', state: 'queued', runs: 0, queued: 1, lastActivity: 5_000 },
    ]);
  });

  it('reads the event log in pages of 1000 when it is longer than a page', async () => {
    const memory = createMemoryLedger();
    await memory.appendEvents(
      Array.from({ length: 2_500 }, (_, index) => event(`s${index % 3}`, index + 1, index)),
    );
    const queries: EventQuery[] = [];
    const ledger: Ledger = {
      ...memory,
      readEvents: (query) => {
        queries.push(query);
        return memory.readEvents(query);
      },
    };
    const rows = await listSessionRows(ledger);
    expect(queries).toEqual([
      { after: 0, limit: 1000 },
      { after: 1000, limit: 1000 },
      { after: 2000, limit: 1000 },
    ]);
    expect(rows.map((row) => [row.key, row.lastActivity])).toEqual([
      ['s0', 2_499],
      ['s2', 2_498],
      ['s1', 2_497],
    ]);
  });
});

describe('formatActivityTime', () => {
  it('shows the simulated time elapsed, not a 1970 date, when a simulated clock near zero wrote the time', () => {
    expect(formatActivityTime(5_035)).toBe('simulated +5.035s');
  });

  it('shows the date when a wall clock wrote the time', () => {
    expect(formatActivityTime(1_700_000_005_035)).toBe('2023-11-14T22:13:25.035Z');
  });

  it('shows a dash when no activity is recorded', () => {
    expect(formatActivityTime(undefined)).toBe('-');
  });
});
