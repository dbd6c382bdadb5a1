import { describe, expect, it } from 'vitest';
import { buildPlanGraph } from '../../src/plans/plan-graph.js';
import { blockedSteps, readySteps } from '../../src/plans/plan-schedule.js';
import { planOf } from './plan-fixtures.js';

// fetch ─┬─ count ── report
//        └─ notify
// audit (independent), summary after report and audit
const graph = buildPlanGraph(
  planOf(
    { id: 'summary', dependsOn: ['report', 'audit'] },
    { id: 'report', args: { n: '$count' } },
    { id: 'count', args: { items: '$fetch.items' } },
    { id: 'notify', dependsOn: ['fetch'] },
    { id: 'fetch' },
    { id: 'audit' },
  ),
);
const none = new Set<string>();

describe('readySteps', () => {
  it('lists steps without dependencies in plan order when nothing has run', () => {
    expect(readySteps(graph, { done: none, running: none, failed: none })).toEqual(['fetch', 'audit']);
  });

  it('lists the dependents whose dependencies are all done, leaving out running ones', () => {
    const state = { done: new Set(['fetch']), running: new Set(['audit']), failed: none };
    expect(readySteps(graph, state)).toEqual(['count', 'notify']);
  });

  it('waits for every dependency when a step has several', () => {
    const done = new Set(['fetch', 'count', 'report', 'notify']);
    expect(readySteps(graph, { done, running: none, failed: none })).toEqual(['audit']);
    done.add('audit');
    expect(readySteps(graph, { done, running: none, failed: none })).toEqual(['summary']);
  });

  it('leaves out failed steps and their dependents when a step failed', () => {
    const state = { done: new Set(['audit']), running: none, failed: new Set(['fetch']) };
    expect(readySteps(graph, state)).toEqual([]);
  });

  it('returns nothing when every step is done', () => {
    expect(readySteps(graph, { done: new Set(graph.ids), running: none, failed: none })).toEqual([]);
  });
});

describe('blockedSteps', () => {
  it('lists every step downstream of a failed one in plan order', () => {
    expect(blockedSteps(graph, new Set(['fetch']))).toEqual(['summary', 'report', 'count', 'notify']);
  });

  it('lists only the steps after the failure when it is in the middle', () => {
    expect(blockedSteps(graph, new Set(['count']))).toEqual(['summary', 'report']);
  });

  it('leaves out steps that failed themselves and ignores unknown ids', () => {
    expect(blockedSteps(graph, new Set(['fetch', 'report', 'fetch-0']))).toEqual([
      'summary',
      'count',
      'notify',
    ]);
  });

  it('returns nothing when no step failed or the failed step has no dependents', () => {
    expect(blockedSteps(graph, none)).toEqual([]);
    expect(blockedSteps(graph, new Set(['summary']))).toEqual([]);
  });
});
