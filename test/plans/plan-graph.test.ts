import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRuntimeError, type RuntimeError } from '../../src/core/errors.js';
import { buildPlanGraph } from '../../src/plans/plan-graph.js';
import { errorOf, planOf } from './plan-fixtures.js';

function cycleError(run: () => unknown): RuntimeError {
  const error = errorOf(run);
  if (!isRuntimeError(error, 'plan_cycle')) throw new Error(`expected plan_cycle, got ${String(error)}`);
  return error;
}

describe('buildPlanGraph', () => {
  it('joins dependsOn and placeholder references in plan order when both are given', () => {
    const graph = buildPlanGraph(
      planOf(
        { id: 'a' },
        { id: 'b' },
        { id: 'c' },
        { id: 'd', args: { x: '$c.x', y: ['${step[0].data}'], z: '$b-1.y' }, dependsOn: ['c', 'b'] },
      ),
    );
    expect(graph.dependencies('d')).toEqual(['a', 'b', 'c']);
    expect(graph.dependents('a')).toEqual(['d']);
    expect(graph.dependencies('a')).toEqual([]);
    expect(graph.ids).toEqual(['a', 'b', 'c', 'd']);
  });

  it('orders steps topologically, preferring plan order when several are ready', () => {
    const graph = buildPlanGraph(
      planOf(
        { id: 'report', dependsOn: ['fetch', 'count'] },
        { id: 'count', args: { n: '$fetch.items' } },
        { id: 'log' },
        { id: 'fetch' },
      ),
    );
    expect(graph.order).toEqual(['log', 'fetch', 'count', 'report']);
  });

  it('takes a newly ready step before a later one when it comes first in the plan', () => {
    const graph = buildPlanGraph(planOf({ id: 'z', dependsOn: ['x'] }, { id: 'x' }, { id: 'y' }));
    expect(graph.order).toEqual(['x', 'z', 'y']);
  });

  it('gives each step its plan index and -1 when the id is unknown', () => {
    const graph = buildPlanGraph(planOf({ id: 'a' }, { id: 'b' }));
    expect([graph.indexOf('a'), graph.indexOf('b'), graph.indexOf('z')]).toEqual([0, 1, -1]);
  });

  it('throws not_found when asked about the dependencies of an unknown step', () => {
    const graph = buildPlanGraph(planOf({ id: 'a' }));
    expect(
      isRuntimeError(
        errorOf(() => graph.dependencies('z')),
        'not_found',
      ),
    ).toBe(true);
    expect(
      isRuntimeError(
        errorOf(() => graph.dependents('z')),
        'not_found',
      ),
    ).toBe(true);
  });

  it('throws invalid_input naming the id when two steps share it', () => {
    const error = errorOf(() => buildPlanGraph(planOf({ id: 'a' }, { id: 'b' }, { id: 'a' })));
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toBe('plan.steps.2.id: duplicate step id "a" (also plan.steps.0.id)');
  });

  it('throws invalid_input naming the step and the dangling id when dependsOn names an unknown step', () => {
    const error = errorOf(() => buildPlanGraph(planOf({ id: 'a' }, { id: 'b', dependsOn: ['a', 'ghost'] })));
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toBe('step "b" depends on unknown step "ghost"');
    expect((error as RuntimeError).details).toEqual({ stepId: 'b', dependency: 'ghost' });
  });

  it('throws invalid_input naming the step when a placeholder names an unknown step or index', () => {
    const unknown = errorOf(() => buildPlanGraph(planOf({ id: 'a', args: { x: '${ghost.data}' } })));
    expect(isRuntimeError(unknown, 'invalid_input')).toBe(true);
    expect((unknown as Error).message).toBe('step "a": ${ghost.data}: unknown step "ghost"');
    const index = errorOf(() =>
      buildPlanGraph(planOf({ id: 'a' }, { id: 'b', args: { x: '${step[2].data}' } })),
    );
    expect((index as Error).message).toBe(
      'step "b": ${step[2].data}: step[2] is out of range (plan has 2 steps)',
    );
  });

  it('throws plan_cycle naming a -> a when a step depends on itself', () => {
    const error = cycleError(() => buildPlanGraph(planOf({ id: 'x' }, { id: 'a', dependsOn: ['a'] })));
    expect(error.message).toBe('plan has a dependency cycle: a -> a');
    expect(error.details).toEqual({ cycle: ['a', 'a'] });
  });

  it('throws plan_cycle naming both steps when two steps depend on each other', () => {
    const error = cycleError(() =>
      buildPlanGraph(planOf({ id: 'a', dependsOn: ['b'] }, { id: 'b', dependsOn: ['a'] })),
    );
    expect(error.message).toBe('plan has a dependency cycle: a -> b -> a');
  });

  it('throws plan_cycle naming three steps when the cycle runs through three', () => {
    const plan = planOf(
      { id: 'start' },
      { id: 'a', dependsOn: ['start', 'b'] },
      { id: 'b', dependsOn: ['c'] },
      { id: 'c', dependsOn: ['a'] },
    );
    const error = cycleError(() => buildPlanGraph(plan));
    expect(error.message).toBe('plan has a dependency cycle: a -> b -> c -> a');
    expect(error.details).toEqual({ cycle: ['a', 'b', 'c', 'a'] });
  });

  it('throws plan_cycle when the cycle goes through a placeholder reference', () => {
    const plan = planOf(
      { id: 'a', args: { x: 'total $b.total' } },
      { id: 'b', args: { y: '${step[0].data}' } },
    );
    expect(cycleError(() => buildPlanGraph(plan)).message).toBe('plan has a dependency cycle: a -> b -> a');
    const self = planOf({ id: 'a', args: { x: '$a.items[*]' } });
    expect(cycleError(() => buildPlanGraph(self)).details).toEqual({ cycle: ['a', 'a'] });
  });

  it('names only the cycle when the walk reaches it through other steps', () => {
    const plan = planOf(
      { id: 'root', dependsOn: ['a'] },
      { id: 'a', dependsOn: ['b'] },
      { id: 'b', dependsOn: ['a'] },
    );
    expect(cycleError(() => buildPlanGraph(plan)).details).toEqual({ cycle: ['a', 'b', 'a'] });
  });

  it('names the cycle met first in plan order when the plan has two', () => {
    const plan = planOf(
      { id: 'p', dependsOn: ['q'] },
      { id: 'q', dependsOn: ['p'] },
      { id: 'r', dependsOn: ['s'] },
      { id: 's', dependsOn: ['r'] },
    );
    expect(cycleError(() => buildPlanGraph(plan)).details).toEqual({ cycle: ['p', 'q', 'p'] });
  });

  it('leaves the plan untouched when it builds', () => {
    const plan = planOf({ id: 'a', args: { x: ['$b.y'] } }, { id: 'b', dependsOn: [] });
    const before = structuredClone(plan);
    buildPlanGraph(plan);
    expect(plan).toEqual(before);
  });
});

/** Random DAGs: step i depends only on steps before it, some through placeholders. */
const dagArbitrary = fc.integer({ min: 1, max: 25 }).chain((size) =>
  fc.tuple(
    fc.constant(size),
    fc.shuffledSubarray(
      Array.from({ length: size }, (_, index) => index),
      { minLength: size, maxLength: size },
    ),
    fc.array(
      fc
        .tuple(fc.nat(), fc.nat(), fc.boolean())
        .map(([from, to, viaPlaceholder]) => ({ from, to, viaPlaceholder })),
      { maxLength: 60 },
    ),
  ),
);

function planFromEdges(
  size: number,
  edges: { from: number; to: number; viaPlaceholder: boolean }[],
  planOrder: readonly number[] = Array.from({ length: size }, (_, index) => index),
) {
  const steps = Array.from({ length: size }, (_, index) => {
    const args: Record<string, unknown> = {};
    const dependsOn: string[] = [];
    return { id: `s${index}`, args, dependsOn };
  });
  for (const { from, to, viaPlaceholder } of edges) {
    const step = steps[from];
    if (step === undefined) continue;
    if (viaPlaceholder) step.args[`k${Object.keys(step.args).length}`] = `$s${to}.value`;
    else step.dependsOn.push(`s${to}`);
  }
  // Plan order is shuffled so the walk may start outside the cycle and order cannot follow the indices.
  return planOf(...planOrder.map((index) => steps[index] as (typeof steps)[number]));
}

describe('buildPlanGraph properties', () => {
  it('builds and orders every dependency first when the graph is acyclic', () => {
    fc.assert(
      fc.property(dagArbitrary, ([size, planOrder, raw]) => {
        const edges = raw.flatMap(({ from, to, viaPlaceholder }) => {
          const later = from % size;
          return later === 0 ? [] : [{ from: later, to: to % later, viaPlaceholder }];
        });
        const graph = buildPlanGraph(planFromEdges(size, edges, planOrder));
        expect([...graph.order].sort()).toEqual([...graph.ids].sort());
        const position = new Map(graph.order.map((id, index) => [id, index]));
        for (const { from, to } of edges) {
          expect(graph.dependencies(`s${from}`)).toContain(`s${to}`);
          expect(position.get(`s${to}`)).toBeLessThan(position.get(`s${from}`) as number);
        }
      }),
    );
  });

  it('throws plan_cycle naming real edges when a back edge closes a cycle', () => {
    fc.assert(
      fc.property(
        dagArbitrary,
        fc.nat(),
        fc.nat(),
        fc.boolean(),
        ([size, planOrder, raw], first, second, viaPlaceholder) => {
          const edges = raw.flatMap(({ from, to, viaPlaceholder: via }) => {
            const later = from % size;
            return later === 0 ? [] : [{ from: later, to: to % later, viaPlaceholder: via }];
          });
          // A chain from `high` down to `low` plus an edge back up makes a cycle for sure.
          const low = first % size;
          const high = low + (second % (size - low));
          for (let step = high; step > low; step -= 1)
            edges.push({ from: step, to: step - 1, viaPlaceholder: false });
          edges.push({ from: low, to: high, viaPlaceholder });
          const plan = planFromEdges(size, edges, planOrder);
          const error = cycleError(() => buildPlanGraph(plan));
          const cycle = (error.details as { cycle: string[] }).cycle;
          expect(cycle.length).toBeGreaterThanOrEqual(2);
          expect(cycle[0]).toBe(cycle[cycle.length - 1]);
          expect(new Set(cycle.slice(1)).size).toBe(cycle.length - 1);
          expect(error.message).toBe(`plan has a dependency cycle: ${cycle.join(' -> ')}`);
          const realEdges = new Set(edges.map(({ from, to }) => `s${from}->s${to}`));
          for (let index = 0; index + 1 < cycle.length; index += 1) {
            expect(realEdges).toContain(`${cycle[index]}->${cycle[index + 1]}`);
          }
        },
      ),
    );
  });
});
