import { createMemoryLedger, type RuntimeEvent } from 'agentlanes';
import { type InboxRecord, type RunRecord } from 'agentlanes/ledger';
import { describe, expect, it } from 'vitest';
import { checkMessages, checkRedeliveries, type SessionRecordSet } from './message-checks.js';
import type { SideRecord, WorkloadMode } from './mixed-protocol.js';
import { createTally, recordLine, type Tally } from './mixed-workload.js';
import { checkRuns } from './run-checks.js';
import { checkTools } from './tool-checks.js';

// The crash suite passes when it finds nothing; these pin that each of its checks does find what it looks for.

const key = 's001';

function message(id: string, status: InboxRecord['status'], runId?: string): InboxRecord {
  const order = Number(id.slice(id.lastIndexOf('-m') + 2));
  const run = runId === undefined ? {} : { runId };
  return {
    sessionKey: key,
    messageId: id,
    order,
    text: id,
    mode: 'followup',
    status,
    acceptedAt: order,
    ...run,
  };
}

function run(runId: string, messageIds: string[], status: RunRecord['status'] = 'completed'): RunRecord {
  const usage = { inputTokens: 0, outputTokens: 0 };
  return {
    runId,
    sessionKey: key,
    status,
    messageIds,
    provider: 'scripted',
    model: 'm',
    startedAt: 0,
    usage,
    text: '',
  };
}

function sent(tally: Tally, ids: Record<string, WorkloadMode>, disposition = 'queued'): Tally {
  for (const [id, mode] of Object.entries(ids)) {
    tally.sent.set(id, { sessionKey: key, mode });
    recordLine(tally, { ack: id, disposition });
  }
  return tally;
}

function records(messages: InboxRecord[], runs: RunRecord[]): SessionRecordSet {
  return { key, messages, runs, turns: [] };
}

let seq = 0;
function event(type: string, runId: string, payload: Record<string, unknown> = {}): RuntimeEvent {
  seq++;
  return { type, sessionKey: key, seq, cursor: seq, at: seq, runId, ...payload } as RuntimeEvent;
}

describe('checkMessages', () => {
  it('finds nothing when every message ran once in arrival order', () => {
    const tally = sent(createTally(), { 's001-m1': 'followup', 's001-m2': 'collect', 's001-m3': 'collect' });
    const set = records(
      [
        message('s001-m1', 'consumed', 'r1'),
        message('s001-m2', 'collected', 'r2'),
        message('s001-m3', 'collected', 'r2'),
      ],
      [run('r1', ['s001-m1']), run('r2', ['s001-m2', 's001-m3'])],
    );
    expect(checkMessages(set, tally)).toEqual([]);
  });

  it('reports a lost message when an acknowledged one is not in the inbox or still pending', () => {
    const tally = sent(createTally(), { 's001-m1': 'followup', 's001-m2': 'followup' });
    const kinds = checkMessages(records([message('s001-m2', 'pending')], []), tally).map(
      (found) => found.kind,
    );
    expect(kinds).toEqual(['lost', 'lost']);
  });

  it('reports a duplicate when a message ran in two runs or a rejected one was stored', () => {
    const tally = sent(createTally(), { 's001-m1': 'followup' });
    sent(tally, { 's001-m2': 'reject' }, 'rejected');
    const set = records(
      [message('s001-m1', 'consumed', 'r1'), message('s001-m2', 'dropped')],
      [run('r1', ['s001-m1']), run('r2', ['s001-m1'])],
    );
    expect(checkMessages(set, tally).map((found) => found.kind)).toEqual([
      'duplicated',
      'duplicated',
      'misordered', // running again is also running out of order
    ]);
  });

  it('allows a steer-backlog message to reach the run it steered and its own followup run', () => {
    const tally = sent(createTally(), { 's001-m1': 'steer-backlog' }, 'steered');
    const set: SessionRecordSet = {
      ...records([message('s001-m1', 'consumed', 'r2')], [run('r1', []), run('r2', ['s001-m1'])]),
      turns: [
        {
          sessionKey: key,
          runId: 'r1',
          index: 1,
          role: 'user',
          content: 'x',
          at: 1,
          messageIds: ['s001-m1'],
        },
      ],
    };
    expect(checkMessages(set, tally)).toEqual([]);
  });

  it('reports misordered messages when a queued message runs before one that arrived earlier', () => {
    const tally = sent(createTally(), { 's001-m1': 'followup', 's001-m2': 'followup' });
    const set = records(
      [message('s001-m1', 'consumed', 'r2'), message('s001-m2', 'consumed', 'r1')],
      [run('r1', ['s001-m2']), run('r2', ['s001-m1'])],
    );
    expect(checkMessages(set, tally).map((found) => found.kind)).toEqual(['misordered']);
  });
});

describe('checkRedeliveries', () => {
  it('reports a redelivered id that was accepted again', () => {
    const tally = sent(createTally(), { 's001-m1': 'followup' });
    recordLine(tally, { ack: 's001-m1', disposition: 'queued' });
    recordLine(tally, { ack: 's001-m1', disposition: 'duplicate' });
    expect(checkRedeliveries(tally).map((found) => found.text)).toEqual([
      's001-m1 was accepted again (queued) when redelivered',
    ]);
  });
});

describe('checkRuns', () => {
  const ended = { status: 'completed', text: '', usage: { inputTokens: 0, outputTokens: 0 }, durationMs: 0 };

  it('reports an overlap when a chat run starts while another is open', () => {
    const events = [
      event('run.started', 'r1', { provider: 'scripted', messageIds: [] }),
      event('run.started', 'r2', { provider: 'scripted', messageIds: [] }),
      event('run.ended', 'r1', ended),
      event('run.ended', 'r2', ended),
    ];
    const found = checkRuns(key, [run('r1', []), run('r2', [])], events, createTally());
    expect(found.map((violation) => violation.kind)).toEqual(['overlap']);
  });

  it('reports an overlap when two runs work at once, and none when the first paused', () => {
    const working = [
      event('tool.called', 'p1', { toolCallId: 'a', tool: 'record', args: {} }),
      event('tool.called', 'r1', { toolCallId: 'b', tool: 'record', args: {} }),
    ];
    expect(checkRuns(key, [], working, createTally()).map((violation) => violation.kind)).toEqual([
      'overlap',
    ]);
    const paused = [working[0] as RuntimeEvent, event('run.paused', 'p1'), working[1] as RuntimeEvent];
    expect(checkRuns(key, [], paused, createTally())).toEqual([]);
  });

  it('lets a plan fail only when a step of it was in doubt (the operator rejects such a step)', () => {
    const plan = { ...run('p1', []), provider: 'plan', status: 'failed' as const };
    const doubt = event('tool.in_doubt', 'p1', { toolCallId: 'a', tool: 'record', args: {}, reason: 'cut' });
    const ended = event('run.ended', 'p1', { status: 'failed' });
    expect(checkRuns(key, [plan], [ended], createTally()).map((found) => found.kind)).toEqual(['other']);
    expect(checkRuns(key, [plan], [doubt, ended], createTally())).toEqual([]);
  });

  it('counts a run a kill cut as at work again only from its next work event after its resume', () => {
    const cut = event('tool.called', 'p1', { toolCallId: 'a', tool: 'record', args: {} });
    const resumed = event('run.resumed', 'p1', { attempt: 1, reason: 'crash' });
    const other = event('tool.called', 'r1', { toolCallId: 'b', tool: 'record', args: {} });
    const again = event('tool.called', 'p1', { toolCallId: 'c', tool: 'record', args: {} });
    expect(checkRuns(key, [], [cut, resumed, other, event('run.ended', 'r1'), again], createTally())).toEqual(
      [],
    );
    expect(
      checkRuns(key, [], [cut, resumed, other, again], createTally()).map((found) => found.kind),
    ).toEqual(['overlap']);
  });

  it('reports a run that crashed though no kill left it open', () => {
    const events = [event('run.ended', 'r1', { ...ended, status: 'crashed' })];
    const found = checkRuns(key, [run('r1', [], 'crashed')], events, createTally());
    expect(found.map((violation) => violation.text)).toEqual([
      `${key}: run r1 is crashed, but no kill left it open`,
    ]);
  });
});

describe('checkTools', () => {
  const side = (toolCallId: string, kind: SideRecord['kind'] = 'executed'): SideRecord => ({
    kind,
    tool: kind === 'supplied' ? 'lookup' : 'record',
    sessionKey: key,
    runId: 'r1',
    toolCallId,
    child: 'r1',
  });

  it('reports a tool call executed twice and a deferred result supplied twice', async () => {
    const runs = new Map([['r1', run('r1', [])]]);
    const found = await checkTools(
      createMemoryLedger(),
      [side('c1'), side('c2'), side('c1'), side('c3', 'supplied'), side('c3', 'supplied')],
      runs,
      [],
    );
    expect(found.map((violation) => violation.kind)).toEqual(['tool-twice', 'tool-twice']);
  });

  it('reports a high-risk call that executed without an approval', async () => {
    const runs = new Map([['r1', run('r1', [])]]);
    const refund: SideRecord = { ...side('c1'), tool: 'refund' };
    const found = await checkTools(createMemoryLedger(), [refund], runs, []);
    expect(found.map((violation) => violation.text)).toEqual([
      `${key}: refund r1/c1 executed without an approval`,
    ]);
  });

  it('takes a recorded approval for a call that ran before a crash and was rejected when it came back in doubt', async () => {
    const runs = new Map([['r1', run('r1', [])]]);
    const refund: SideRecord = { ...side('c1'), tool: 'refund' };
    const approved = event('approval.resolved', 'r1', {
      toolCallId: 'c1',
      tool: 'refund',
      decision: 'approve',
    });
    const rejected = event('approval.resolved', 'r1', {
      toolCallId: 'c1',
      tool: 'refund',
      decision: 'reject',
    });
    expect(await checkTools(createMemoryLedger(), [refund], runs, [approved, rejected])).toEqual([]);
    // A rejection alone (or an approval of another call) is no approval.
    const other = event('approval.resolved', 'r1', { toolCallId: 'c2', tool: 'refund', decision: 'approve' });
    const found = await checkTools(createMemoryLedger(), [refund], runs, [rejected, other]);
    expect(found.map((violation) => violation.text)).toEqual([
      `${key}: refund r1/c1 executed without an approval`,
    ]);
  });
});
