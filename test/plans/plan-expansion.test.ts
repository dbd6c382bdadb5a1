import { describe, expect, it } from 'vitest';
import type { ChildLookup } from '../../src/plans/plan-expansion.js';
import { expandStep } from '../../src/plans/plan-expansion.js';
import { resolveArgs } from '../../src/plans/placeholders.js';
import type { Plan, PlanStep } from '../../src/plans/plan-schema.js';
import type { StepLookup } from '../../src/plans/step-result.js';
import { failed, lookupFrom, planOf, succeeded } from './plan-fixtures.js';

const noChildren: ChildLookup = () => undefined;

function childrenOf(entries: Record<string, readonly string[]>): ChildLookup {
  return (stepId) => entries[stepId];
}

function stepOf(plan: Plan, id: string): PlanStep {
  const step = plan.steps.find((candidate) => candidate.id === id);
  if (step === undefined) throw new Error(`no step ${id}`);
  return step;
}

function expanded(plan: Plan, id: string, lookup: StepLookup, children: ChildLookup = noChildren) {
  const outcome = expandStep(stepOf(plan, id), lookup, children, plan);
  if (!outcome.ok) throw new Error(`unexpected failure: ${outcome.error.message}`);
  return outcome;
}

function failure(plan: Plan, id: string, lookup: StepLookup, children: ChildLookup = noChildren): string {
  const outcome = expandStep(stepOf(plan, id), lookup, children, plan);
  if (outcome.ok) throw new Error(`unexpected success: ${JSON.stringify(outcome.steps)}`);
  expect(outcome.error.code).toBe('args_unresolved');
  return outcome.error.message;
}

const items = [
  { id: 'a', qty: 2 },
  { id: 'b', qty: 5 },
  { id: 'c', qty: 1 },
];

describe('expandStep', () => {
  it('returns the step as it is when it neither expands nor fans out', () => {
    const plan = planOf({ id: 'list' }, { id: 'ship', args: { id: '$list.items[0].id', note: '$$5' } });
    const outcome = expanded(plan, 'ship', lookupFrom(succeeded('list', { items })));
    expect(outcome).toEqual({
      ok: true,
      expanded: false,
      steps: [{ id: 'ship', tool: 't', args: { id: '$list.items[0].id', note: '$$5' } }],
    });
  });

  it('makes one step per item with indexed placeholders when args hold [*]', () => {
    const plan = planOf(
      { id: 'list' },
      {
        id: 'ship',
        tool: 'orders.ship',
        args: { id: '$list.items[*].id', text: 'Ship $list.items[*].qty of $$x' },
      },
    );
    const outcome = expanded(plan, 'ship', lookupFrom(succeeded('list', { items })));
    expect(outcome.expanded).toBe(true);
    expect(outcome.steps).toEqual(
      [0, 1, 2].map((index) => ({
        id: `ship-${index}`,
        tool: 'orders.ship',
        args: { id: `$list.items[${index}].id`, text: `Ship $list.items[${index}].qty of $$x` },
        parentId: 'ship',
        index,
      })),
    );
  });

  it('gives raw values to whole strings and interpolates embedded ones when the expanded args are resolved', () => {
    const plan = planOf(
      { id: 'list' },
      { id: 'ship', args: { item: '$list.items[*]', text: 'qty $list.items[*].qty' } },
    );
    const lookup = lookupFrom(succeeded('list', { items }));
    const resolved = expanded(plan, 'ship', lookup).steps.map((step) => resolveArgs(step.args, lookup, plan));
    expect(resolved).toEqual([
      { ok: true, args: { item: { id: 'a', qty: 2 }, text: 'qty 2' } },
      { ok: true, args: { item: { id: 'b', qty: 5 }, text: 'qty 5' } },
      { ok: true, args: { item: { id: 'c', qty: 1 }, text: 'qty 1' } },
    ]);
  });

  it('treats the braced and short forms of one array as one source when both appear', () => {
    const plan = planOf(
      { id: 'list' },
      { id: 'ship', args: { a: '${step[0].data.items[*].id}', b: ['$list.items[*].qty'] } },
    );
    const outcome = expanded(plan, 'ship', lookupFrom(succeeded('list', { items: items.slice(0, 2) })));
    expect(outcome.steps.map((step) => step.args)).toEqual([
      { a: '${step[0].data.items[0].id}', b: ['$list.items[0].qty'] },
      { a: '${step[0].data.items[1].id}', b: ['$list.items[1].qty'] },
    ]);
  });

  it('returns zero steps when the array is empty', () => {
    const plan = planOf({ id: 'list' }, { id: 'ship', args: { id: '$list.items[*].id' } });
    expect(expanded(plan, 'ship', lookupFrom(succeeded('list', { items: [] })))).toEqual({
      ok: true,
      steps: [],
      expanded: true,
    });
  });

  it('fails with args_unresolved when the expanded value is not an array', () => {
    const plan = planOf({ id: 'list' }, { id: 'ship', args: { id: '$list.items[*].id' } });
    expect(failure(plan, 'ship', lookupFrom(succeeded('list', { items: { id: 'a' } })))).toBe(
      '$list.items[*].id: [*] needs an array, got an object',
    );
  });

  it('fails with args_unresolved when the source step has no result or failed', () => {
    const plan = planOf({ id: 'list' }, { id: 'ship', args: { id: '$list.items[*].id' } });
    expect(failure(plan, 'ship', lookupFrom())).toBe('$list.items[*].id: step "list" has no result');
    expect(failure(plan, 'ship', lookupFrom(failed('list')))).toBe(
      '$list.items[*].id: step "list" failed (tool_failed: boom)',
    );
  });

  it('fails naming both sources when args expand over two different arrays', () => {
    const plan = planOf(
      { id: 'a' },
      { id: 'b' },
      { id: 'c', args: { x: '$a.items[*]', y: '$b.items[*].id' } },
    );
    const lookup = lookupFrom(succeeded('a', { items }), succeeded('b', { items }));
    expect(failure(plan, 'c', lookup)).toBe(
      'step "c" expands over more than one array ($a.items[*], $b.items[*]); use one [*] source',
    );
  });

  it('fails when one placeholder holds two [*] or [*] follows .*', () => {
    const plan = planOf(
      { id: 'a' },
      { id: 'c', args: { x: '$a.rows[*].cells[*]' } },
      { id: 'd', args: { x: '$a.rows.*.cells[*]' } },
    );
    const lookup = lookupFrom(succeeded('a', { rows: [{ cells: [1] }] }));
    expect(failure(plan, 'c', lookup)).toMatch(/^step "c" expands over more than one array/);
    expect(failure(plan, 'd', lookup)).toBe('$a.rows.*.cells[*]: [*] cannot follow .*');
  });

  it('fails when [*] reads a step that was itself expanded', () => {
    const plan = planOf({ id: 'a' }, { id: 'c', args: { x: '$a.items[*]' } });
    expect(failure(plan, 'c', lookupFrom(), childrenOf({ a: ['a-0', 'a-1'] }))).toBe(
      '$a.items[*]: step "a" was expanded into 2 steps; [*] needs the array of one step',
    );
  });

  it('fans out over the children with rewritten references when a referenced step was expanded', () => {
    const plan = planOf(
      { id: 'fetch' },
      { id: 'other' },
      {
        id: 'notify',
        args: {
          name: '$fetch.name',
          text: 'Hi $fetch.name, ${step[0].success} $other.x',
          id: '${fetch.data.id}',
        },
      },
    );
    const outcome = expanded(plan, 'notify', lookupFrom(), childrenOf({ fetch: ['fetch-0', 'fetch-1'] }));
    expect(outcome.steps).toEqual(
      [0, 1].map((index) => ({
        id: `notify-${index}`,
        tool: 't',
        args: {
          name: `$fetch-${index}.name`,
          text: `Hi $fetch-${index}.name, \${fetch-${index}.success} $other.x`,
          id: `\${fetch-${index}.data.id}`,
        },
        parentId: 'notify',
        index,
      })),
    );
  });

  it('resolves each fanned-out step from its own child when the children have results', () => {
    const plan = planOf({ id: 'fetch' }, { id: 'notify', args: { name: '$fetch.name' } });
    const lookup = lookupFrom(succeeded('fetch-0', { name: 'Ada' }), succeeded('fetch-1', { name: 'Alan' }));
    const steps = expanded(plan, 'notify', lookup, childrenOf({ fetch: ['fetch-0', 'fetch-1'] })).steps;
    expect(steps.map((step) => resolveArgs(step.args, lookup, plan))).toEqual([
      { ok: true, args: { name: 'Ada' } },
      { ok: true, args: { name: 'Alan' } },
    ]);
  });

  it('rewrites to the braced form reading data when a child id does not read as $<id>', () => {
    const plan = planOf({ id: 'fetch' }, { id: 'notify', args: { name: '$fetch.name' } });
    const outcome = expanded(plan, 'notify', lookupFrom(), childrenOf({ fetch: ['first'] }));
    expect(outcome.steps[0]?.args).toEqual({ name: '${first.data.name}' });
  });

  it('returns zero steps when the referenced step expanded into no children', () => {
    const plan = planOf({ id: 'fetch' }, { id: 'notify', args: { name: '$fetch.name' } });
    expect(expanded(plan, 'notify', lookupFrom(), childrenOf({ fetch: [] })).steps).toEqual([]);
  });

  it('pairs [*] items with children by index when both have the same length', () => {
    const plan = planOf(
      { id: 'list' },
      { id: 'fetch' },
      { id: 'ship', args: { id: '$list.items[*].id', user: '$fetch' } },
    );
    const lookup = lookupFrom(succeeded('list', { items: items.slice(0, 2) }));
    const outcome = expanded(plan, 'ship', lookup, childrenOf({ fetch: ['fetch-0', 'fetch-1'] }));
    expect(outcome.steps.map((step) => step.args)).toEqual([
      { id: '$list.items[0].id', user: '$fetch-0' },
      { id: '$list.items[1].id', user: '$fetch-1' },
    ]);
  });

  it('fails naming both lengths when [*] items and children differ in number', () => {
    const plan = planOf(
      { id: 'list' },
      { id: 'fetch' },
      { id: 'ship', args: { id: '$list.items[*].id', user: '$fetch' } },
    );
    const lookup = lookupFrom(succeeded('list', { items }));
    expect(failure(plan, 'ship', lookup, childrenOf({ fetch: ['fetch-0', 'fetch-1'] }))).toBe(
      'step "ship" cannot pair expansions of different lengths: $list.items[*].id has 3 items, step "fetch" has 2 children',
    );
  });

  it('fails when two fanned-out steps have different numbers of children', () => {
    const plan = planOf({ id: 'a' }, { id: 'b' }, { id: 'c', args: { x: '$a', y: '$b' } });
    expect(failure(plan, 'c', lookupFrom(), childrenOf({ a: ['a-0'], b: ['b-0', 'b-1'] }))).toBe(
      'step "c" cannot pair expansions of different lengths: step "a" has 1 child, step "b" has 2 children',
    );
  });

  it('leaves the step, the plan and the results untouched when it expands', () => {
    const plan = planOf(
      { id: 'list' },
      { id: 'ship', args: { nested: { id: ['$list.items[*].id'] }, user: '$fetch' } },
      { id: 'fetch' },
    );
    const data = { items: items.slice(0, 2) };
    const planBefore = structuredClone(plan);
    const dataBefore = structuredClone(data);
    expanded(
      plan,
      'ship',
      lookupFrom(succeeded('list', data)),
      childrenOf({ fetch: ['fetch-0', 'fetch-1'] }),
    );
    expect(plan).toEqual(planBefore);
    expect(data).toEqual(dataBefore);
  });
});
