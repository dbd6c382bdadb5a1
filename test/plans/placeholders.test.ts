import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import { findReferences, referencedSteps, resolveArgs } from '../../src/plans/placeholders.js';
import type { StepLookup } from '../../src/plans/step-result.js';
import { errorOf, failed, lookupFrom, planOf, succeeded } from './plan-fixtures.js';

const plan = planOf({ id: 'step-1' }, { id: 'list' }, { id: 'user' });
const orders = { items: [{ id: 'a1' }, { id: 'b2' }], total: 12, note: null, flag: false };
const lookup = lookupFrom(
  succeeded('step-1', orders),
  succeeded('list', [
    { id: 'x', tags: [{ name: 'red' }, { name: 'blue' }] },
    { id: 'y', tags: [] },
  ]),
);

function resolved(args: Record<string, unknown>, from: StepLookup = lookup): unknown {
  const outcome = resolveArgs(args, from, plan);
  if (!outcome.ok) throw new Error(`unexpected failure: ${outcome.error.message}`);
  return outcome.args;
}

function unresolvedMessage(args: Record<string, unknown>, from: StepLookup = lookup): string {
  const outcome = resolveArgs(args, from, plan);
  if (outcome.ok) throw new Error(`unexpected success: ${JSON.stringify(outcome.args)}`);
  expect(outcome.error.code).toBe('args_unresolved');
  return outcome.error.message;
}

describe('findReferences', () => {
  it('lists placeholders at any depth in order when args are nested', () => {
    const args = { a: 'costs $5 then $step-1.total', b: [{ c: '${step[1].data}' }, 3, '$user'] };
    expect(findReferences(args, plan).map((ref) => ref.raw)).toEqual([
      '$step-1.total',
      '${step[1].data}',
      '$user',
    ]);
  });

  it('marks a placeholder as expanding when its path holds [*]', () => {
    const [ref] = findReferences({ a: '$step-1.items[*].id' }, plan);
    expect(ref?.expands).toBe(true);
  });

  it('throws invalid_input naming the placeholder when braces are malformed', () => {
    const error = errorOf(() => findReferences({ a: 'x ${step-1.a b}' }, plan));
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toBe('${step-1.a b}: unexpected " b" in placeholder path');
  });
});

describe('referencedSteps', () => {
  it('maps step[N] to the plan id and children to their plan step when both forms are used', () => {
    const args = { a: '${step[1].data}', b: ['$step-1-0.x', '${user-2-1.data}'], c: 'costs $5' };
    expect(referencedSteps(args, plan)).toEqual(new Set(['list', 'step-1', 'user']));
  });

  it('throws invalid_input when ${…} names an unknown step', () => {
    const error = errorOf(() => referencedSteps({ a: '${ghost.data}' }, plan));
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toBe('${ghost.data}: unknown step "ghost"');
  });

  it('throws invalid_input when step[N] is out of range', () => {
    const error = errorOf(() => referencedSteps({ a: '${step[3].data}' }, plan));
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toBe('${step[3].data}: step[3] is out of range (plan has 3 steps)');
  });

  it('returns an empty set when $<id> names no step', () => {
    expect(referencedSteps({ price: 'costs $5', other: '$ghost.x' }, plan)).toEqual(new Set());
  });
});

describe('resolveArgs', () => {
  it('keeps the value type when a string is exactly one placeholder', () => {
    expect(
      resolved({
        count: '$step-1.total',
        first: '$step-1.items[0]',
        all: '$step-1',
        none: '$step-1.note',
        flag: '$step-1.flag',
      }),
    ).toEqual({ count: 12, first: { id: 'a1' }, all: orders, none: null, flag: false });
  });

  it('interpolates strings as they are and other values as JSON when the placeholder is embedded', () => {
    expect(
      resolved({
        text: 'Order $step-1.items[1].id shipped',
        total: 'total: $step-1.total',
        item: 'item=$step-1.items[0]',
        none: '[$step-1.note]',
      }),
    ).toEqual({ text: 'Order b2 shipped', total: 'total: 12', item: 'item={"id":"a1"}', none: '[null]' });
  });

  it('resolves placeholders at any depth when args hold objects and arrays', () => {
    const args = { deep: { list: ['$step-1.total', { id: '$step-1.items[1].id' }, 7, null] } };
    expect(resolved(args)).toEqual({ deep: { list: [12, { id: 'b2' }, 7, null] } });
  });

  it('reads from the whole result when the placeholder is braced', () => {
    expect(
      resolved({
        id: '${step[1].data[0].id}',
        ok: '${step[0].success}',
        retries: '${step-1.metadata.retries}',
        text: 'ok=${list.success}',
      }),
    ).toEqual({ id: 'x', ok: true, retries: 0, text: 'ok=true' });
  });

  it('maps the rest of the path over an array when the path has .*', () => {
    expect(
      resolved({
        ids: '${step[1].data.*.id}',
        short: '$step-1.items.*.id',
        nested: '$list.*.tags.*.name',
        text: 'ids: $step-1.items.*.id',
      }),
    ).toEqual({
      ids: ['x', 'y'],
      short: ['a1', 'b2'],
      nested: [['red', 'blue'], []],
      text: 'ids: ["a1","b2"]',
    });
  });

  it('turns $$ into $ and keeps $<unknown> as text when the string holds dollars', () => {
    expect(resolved({ a: 'costs $5', b: '$$step-1.total is $step-1.total', c: '$$', d: '100$' })).toEqual({
      a: 'costs $5',
      b: '$step-1.total is 12',
      c: '$',
      d: '100$',
    });
  });

  it('resolves a child id from the lookup when an expanded step is referenced by child', () => {
    const children = lookupFrom(succeeded('user-1', { name: 'Ada' }));
    expect(resolved({ name: '$user-1.name' }, children)).toEqual({ name: 'Ada' });
  });

  it('fails naming the index and length when an index is out of range', () => {
    expect(unresolvedMessage({ a: '$step-1.items[3].id' })).toBe(
      '$step-1.items[3].id: index 3 is out of range (length 2)',
    );
  });

  it('fails naming the key when a key is missing, even one on the prototype', () => {
    expect(unresolvedMessage({ a: 'x $step-1.items[0].sku' })).toBe(
      '$step-1.items[0].sku: key "sku" is missing',
    );
    expect(unresolvedMessage({ a: '$step-1.constructor' })).toBe(
      '$step-1.constructor: key "constructor" is missing',
    );
  });

  it('fails when the path reads into a value that is not an object or array', () => {
    expect(unresolvedMessage({ a: '$step-1.total.cents' })).toBe(
      '$step-1.total.cents: cannot read key "cents" of a number',
    );
    expect(unresolvedMessage({ a: '$step-1.note[0]' })).toBe('$step-1.note[0]: cannot index null with [0]');
    expect(unresolvedMessage({ a: '$step-1.items.id' })).toBe(
      '$step-1.items.id: cannot read key "id" of an array',
    );
    expect(unresolvedMessage({ a: '$step-1.total.*' })).toBe(
      '$step-1.total.*: .* needs an array, got a number',
    );
  });

  it('fails naming the element when .* meets an element without the key', () => {
    const from = lookupFrom(succeeded('list', [{ id: 'x' }, { name: 'y' }]));
    expect(unresolvedMessage({ a: '$list.*.id' }, from)).toBe('$list.*.id: element 1: key "id" is missing');
  });

  it('fails when the referenced step has no result', () => {
    expect(unresolvedMessage({ a: '$user.name' })).toBe('$user.name: step "user" has no result');
    expect(unresolvedMessage({ a: '${ghost.data}' })).toBe('${ghost.data}: step "ghost" has no result');
  });

  it('fails when a placeholder reads the data of a failed step', () => {
    const from = lookupFrom(failed('user', 'no such user'));
    expect(unresolvedMessage({ a: '$user' }, from)).toBe(
      '$user: step "user" failed (tool_failed: no such user)',
    );
    expect(unresolvedMessage({ a: '${step[2].data.name}' }, from)).toBe(
      '${step[2].data.name}: step "user" failed (tool_failed: no such user)',
    );
  });

  it('reads success and error of a failed step when the braced path does not go into data', () => {
    const from = lookupFrom(failed('user', 'no such user'));
    expect(resolved({ ok: '${user.success}', why: '${step[2].error.message}' }, from)).toEqual({
      ok: false,
      why: 'no such user',
    });
  });

  it('fails when the step succeeded without data', () => {
    const from = lookupFrom({
      stepId: 'user',
      success: true,
      metadata: { executionTime: 1, retries: 0, startedAt: 0 },
    });
    expect(unresolvedMessage({ a: '$user' }, from)).toBe('$user: step "user" has no data');
    expect(unresolvedMessage({ a: '${user.data}' }, from)).toBe('${user.data}: key "data" is missing');
  });

  it('fails when step[N] is out of range, braces are malformed or [*] was not expanded', () => {
    expect(unresolvedMessage({ a: '${step[9].data}' })).toBe(
      '${step[9].data}: step[9] is out of range (plan has 3 steps)',
    );
    expect(unresolvedMessage({ a: '${step-1' })).toBe('${step-1: missing "}"');
    expect(unresolvedMessage({ a: '$step-1.items[*].id' })).toMatch(
      /^\$step-1\.items\[\*\]\.id: \[\*\] expands/,
    );
  });

  it('reports the first unresolved placeholder when several fail', () => {
    expect(unresolvedMessage({ a: '$step-1.total', b: '$step-1.nope', c: '$user.x' })).toBe(
      '$step-1.nope: key "nope" is missing',
    );
  });

  it('leaves args and results untouched when it resolves', () => {
    const args = { whole: '$step-1', list: ['$step-1.items', { x: '$$' }] };
    const data = { items: [{ id: 'a' }] };
    const from = lookupFrom(succeeded('step-1', data));
    const argsBefore = structuredClone(args);
    const dataBefore = structuredClone(data);
    const outcome = resolveArgs(args, from, plan);
    expect(args).toEqual(argsBefore);
    expect(outcome.ok && outcome.args).not.toBe(args);
    if (!outcome.ok) throw new Error('expected success');
    // The resolved values are copies: a tool mutating its args cannot change what later steps read.
    (outcome.args.whole as { items: unknown[] }).items.push('extra');
    (outcome.args.list as unknown[][])[0]?.push('extra');
    expect(data).toEqual(dataBefore);
  });
});
