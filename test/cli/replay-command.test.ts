import { describe, expect, it } from 'vitest';
import { createMemoryLedger, type Ledger, type RuntimeEvent } from 'agentlanes';
import { type EventQuery } from 'agentlanes/ledger';
import { runReplayCommand } from '../../src/cli/replay-command.js';
import { captureOutput } from './captured-output.js';
import { recordHistory } from './recorded-history.js';

async function recorded(): Promise<Ledger> {
  const ledger = createMemoryLedger();
  await (await recordHistory(ledger)).finish();
  return ledger;
}

describe('runReplayCommand', () => {
  it('prints the session timeline in event order with coalesced deltas when a runtime recorded it', async () => {
    const output = captureOutput();
    expect(await runReplayCommand(await recorded(), 'telegram:alice', { output })).toBe(0);
    expect(output.lines()).toEqual([
      '  +0.000s  message received   a1  collect -> started  from alice  "Where is my order A-1?"',
      '  +0.000s  run started        run_1  messages a1  scripted/m',
      '  +0.000s  cost               run_1  scripted/m  6 in / 0 out  no price',
      '  +0.000s  tool called        run_1  lookup_order  {"orderId":"A-1"}  call-1',
      '  +0.000s  tool succeeded     run_1  lookup_order  0.000s  {"orderId":"A-1","status":"shipped"}  call-1',
      '  +0.000s  assistant text     run_1  "Order A-1 has"',
      '  +0.025s  message received   a2  steer -> steered  "answer in French please"',
      '  +0.025s  message steered    run_1  a2',
      '  +0.030s  assistant text     run_1  " shipped and arrives in two days."',
      '  +0.080s  assistant block    run_1  #0  46 chars',
      '  +0.080s  cost               run_1  scripted/m  15 in / 9 out  no price',
      '  +0.080s  message admitted   run_1  a2',
      '  +0.080s  assistant text     run_1  "Votre commande A-1 est expédiée."',
      '  +0.080s  assistant block    run_1  #1  32 chars',
      '  +0.080s  cost               run_1  scripted/m  32 in / 5 out  no price',
      '  +0.080s  assistant final    run_1  "Votre commande A-1 est expédiée."',
      '  +0.080s  run ended          run_1  completed  0.080s  tokens 53 in / 14 out',
      '  +1.025s  message received   a3  collect -> started  "thanks"',
      '  +1.025s  run started        run_2  messages a3  scripted/m',
      '  +1.025s  message received   a4  collect -> collected  "also"',
      '  +1.025s  message collected  a4  position 1',
      '  +1.025s  assistant text     run_2  "You are welcome."',
      '  +1.025s  message received   a5  collect -> collected  "when does it arrive?"',
      '  +1.025s  message collected  a5  position 2',
      '  +1.025s  assistant block    run_2  #0  16 chars',
      '  +1.025s  cost               run_2  scripted/m  42 in / 3 out  no price',
      '  +1.025s  assistant final    run_2  "You are welcome."',
      '  +1.025s  run ended          run_2  completed  0.000s  tokens 42 in / 3 out',
      '  +2.025s  run started        run_3  messages a4, a5  scripted/m',
      '  +2.025s  assistant text     run_3  "Order A-1 has shipped and arrives in two days."',
      '  +2.105s  assistant block    run_3  #0  46 chars',
      '  +2.105s  cost               run_3  scripted/m  69 in / 9 out  no price',
      '  +2.105s  assistant final    run_3  "Order A-1 has shipped and arrives in two days."',
      '  +2.105s  run ended          run_3  completed  0.080s  tokens 69 in / 9 out',
    ]);
  });

  it('shows the abort, the duplicate and the queued follow-up of the other sessions when replayed', async () => {
    const ledger = await recorded();
    const replay = async (sessionKey: string) => {
      const output = captureOutput();
      await runReplayCommand(ledger, sessionKey, { output });
      return output.lines();
    };
    expect(await replay('telegram:bob')).toEqual([
      '  +0.000s  message received   b1  collect -> started  "stop me"',
      '  +0.000s  run started        run_4  messages b1  scripted/m',
      '  +0.500s  run ended          run_4  aborted  cancelled  0.500s  tokens 0 in / 0 out',
    ]);
    expect(await replay('telegram:dave')).toContain('  +0.000s  message duplicate  d1');
    expect((await replay('telegram:carol')).slice(2)).toEqual([
      '  +0.000s  message received   c2  followup -> queued  "are you there?"',
      '  +0.000s  message queued     c2  position 1',
      '  +0.010s  run ended          run_6  aborted  cancelled  0.010s  tokens 0 in / 0 out',
    ]);
  });

  it('exits 1 naming the session when the ledger has no events for it', async () => {
    const output = captureOutput();
    const errors = captureOutput();
    expect(await runReplayCommand(await recorded(), 'telegram:nobody', { output, errors })).toBe(1);
    expect(output.text()).toBe('');
    expect(errors.text()).toBe('agentlanes: no events for session "telegram:nobody"\n');
  });

  it('reads a page of 1000 events at a time and coalesces deltas across pages when a run is long', async () => {
    const memory = createMemoryLedger();
    const deltas = Array.from({ length: 1_500 }, (_, index): RuntimeEvent => ({
      type: 'assistant.delta',
      delta: 'x',
      runId: 'r1',
      sessionKey: 'k',
      seq: index + 1,
      cursor: index + 1,
      at: index,
    }));
    await memory.appendEvents(deltas);
    const queries: EventQuery[] = [];
    const ledger: Ledger = {
      ...memory,
      readEvents: (query) => {
        queries.push(query);
        return memory.readEvents(query);
      },
    };
    const output = captureOutput();
    await runReplayCommand(ledger, 'k', { output });
    expect(queries).toEqual([
      { sessionKey: 'k', after: 0, limit: 1000 },
      { sessionKey: 'k', after: 1000, limit: 1000 },
    ]);
    expect(output.lines()).toEqual([`  +0.000s  assistant text     r1  "${'x'.repeat(79)}…"`]);
  });

  it('colours the timeline on a terminal and not when NO_COLOR is set', async () => {
    const ledger = await recorded();
    const colored = captureOutput({ isTTY: true });
    await runReplayCommand(ledger, 'telegram:bob', { output: colored, env: {} });
    expect(colored.lines()[2]).toContain('\x1b[31mrun ended');
    const plain = captureOutput({ isTTY: true });
    await runReplayCommand(ledger, 'telegram:bob', { output: plain, env: { NO_COLOR: '1' } });
    expect(plain.text()).not.toContain('\x1b[');
  });
});
