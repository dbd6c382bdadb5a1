import { describe, expect, it } from 'vitest';
import type { EventInput } from 'agentlanes/events';
import type { RuntimeEvent } from 'agentlanes';
import { renderTimeline } from '../../src/cli/render-timeline.js';

/** Stamp events of one session the way the bus does, with `at` given per event. */
function stamp(inputs: readonly (readonly [number, EventInput])[]): RuntimeEvent[] {
  return inputs.map(([at, input], index) => ({
    ...input,
    sessionKey: 'web:1',
    seq: index + 1,
    cursor: index + 1,
    at,
  }));
}

/** Remove SGR codes (`ESC [ n m`) from a line. */
function stripAnsi(line: string): string {
  const [head = '', ...rest] = line.split('\x1b[');
  return head + rest.map((part) => part.replace(/^\d+m/, '')).join('');
}

const start = 1_000_000;
const long = 'word '.repeat(40).trim();

describe('renderTimeline', () => {
  it('renders each event kind on one line with its time since the first event when colour is off', () => {
    const events = stamp([
      [
        start,
        {
          type: 'message.received',
          messageId: 'm1',
          text: 'hi\nthere',
          mode: 'collect',
          disposition: 'started',
        },
      ],
      [start, { type: 'run.started', runId: 'r1', messageIds: ['m1'], provider: 'p', model: 'm' }],
      [start + 5, { type: 'lane.waited', runId: 'r1', lane: 'global', waitedMs: 2500, position: 3 }],
      [start + 10, { type: 'tool.called', runId: 'r1', toolCallId: 'c1', tool: 'search', args: { q: 'x' } }],
      [
        start + 12,
        {
          type: 'tool.failed',
          runId: 'r1',
          toolCallId: 'c1',
          tool: 'search',
          error: { code: 'tool_failed', message: 'boom' },
        },
      ],
      [start + 12, { type: 'tool.skipped', runId: 'r1', toolCallId: 'c2', tool: 'fetch', reason: 'steered' }],
      [start + 20, { type: 'message.dropped', messageId: 'm0', reason: 'cap_summarize', summary: 'old ask' }],
      [start + 21, { type: 'message.rejected', messageId: 'm9', code: 'queue_full' }],
      [
        start + 12_345,
        {
          type: 'run.ended',
          runId: 'r1',
          status: 'failed',
          error: { code: 'provider_auth', message: 'bad key' },
          text: '',
          usage: { inputTokens: 7, outputTokens: 0 },
          durationMs: 12_345,
        },
      ],
    ]);
    expect(renderTimeline(events, { color: false })).toEqual([
      '  +0.000s  message received   m1  collect -> started  "hi\\nthere"',
      '  +0.000s  run started        r1  messages m1  p/m',
      '  +0.005s  lane waited        r1  global  waited 2.500s  position 3',
      '  +0.010s  tool called        r1  search  {"q":"x"}  c1',
      '  +0.012s  tool failed        r1  search  tool_failed: boom  c1',
      '  +0.012s  tool skipped       r1  fetch  "steered"  c2',
      '  +0.020s  message dropped    m0  cap_summarize  "old ask"',
      '  +0.021s  message rejected   m9  queue_full',
      ' +12.345s  run ended          r1  failed  provider_auth  12.345s  tokens 7 in / 0 out',
    ]);
  });

  it('coalesces consecutive deltas of a run into one line at the first delta when nothing comes between', () => {
    const events = stamp([
      [start, { type: 'assistant.reasoning', runId: 'r1', delta: 'think ' }],
      [start + 1, { type: 'assistant.reasoning', runId: 'r1', delta: 'hard' }],
      [start + 2, { type: 'assistant.delta', runId: 'r1', delta: 'Hello' }],
      [start + 3, { type: 'assistant.delta', runId: 'r1', delta: ' there' }],
      [start + 4, { type: 'message.steered', runId: 'r1', messageId: 's1' }],
      [start + 5, { type: 'assistant.delta', runId: 'r1', delta: ' friend' }],
      [start + 6, { type: 'assistant.delta', runId: 'r2', delta: 'Other run' }],
    ]);
    expect(renderTimeline(events, { color: false })).toEqual([
      '  +0.000s  reasoning          r1  "think hard"',
      '  +0.002s  assistant text     r1  "Hello there"',
      '  +0.004s  message steered    r1  s1',
      '  +0.005s  assistant text     r1  " friend"',
      '  +0.006s  assistant text     r2  "Other run"',
    ]);
  });

  it('cuts text to 80 characters and tool JSON to 60 when they are longer', () => {
    const events = stamp([
      [start, { type: 'assistant.final', runId: 'r1', text: long }],
      [
        start,
        {
          type: 'tool.succeeded',
          runId: 'r1',
          toolCallId: 'c1',
          tool: 't',
          output: { long },
          durationMs: 40,
        },
      ],
    ]);
    const [final, tool] = renderTimeline(events, { color: false });
    expect(final).toBe(`  +0.000s  assistant final    r1  "${long.slice(0, 79)}…"`);
    expect(tool).toBe(
      `  +0.000s  tool succeeded     r1  t  0.040s  {"long":"${long.slice(0, 50).trimEnd()}…  c1`,
    );
  });

  it('returns no lines when there are no events', () => {
    expect(renderTimeline([], { color: true })).toEqual([]);
  });

  it('wraps times, labels and run ids in ANSI codes when colour is on', () => {
    const events = stamp([
      [start, { type: 'run.started', runId: 'r1', messageIds: ['m1'], provider: 'p', model: 'm' }],
      [
        start + 1,
        {
          type: 'run.ended',
          runId: 'r1',
          status: 'completed',
          text: 'ok',
          usage: { inputTokens: 1, outputTokens: 1 },
          durationMs: 1,
        },
      ],
    ]);
    const [started, ended] = renderTimeline(events, { color: true });
    expect(started).toBe(
      '\x1b[2m  +0.000s\x1b[22m  \x1b[35mrun started      \x1b[39m  \x1b[2mr1\x1b[22m  messages m1  p/m',
    );
    expect(ended).toContain('\x1b[32mrun ended');
    // Without the codes the line reads as with colour off.
    const plain = renderTimeline(events, { color: false });
    expect(stripAnsi(ended ?? '')).toBe(plain[1]);
  });
});
