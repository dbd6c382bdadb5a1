import { mapArgStrings } from './arg-strings.js';
import { formatPath, formatRef, parseTemplate } from './placeholder-syntax.js';
import type { PlaceholderRef, Segment } from './placeholder-syntax.js';
import { parseArgs, placeholderIds, refTarget, resolveRef } from './placeholders.js';
import type { UnresolvedArgs } from './placeholders.js';
import type { Plan, PlanStep } from './plan-schema.js';
import { childStepId } from './step-ids.js';
import type { StepLookup } from './step-result.js';
import { describeValue } from './value-path.js';

/** The ids a step was expanded into (`fetch` → `['fetch-0', 'fetch-1']`), `undefined` if it was not. */
export type ChildLookup = (stepId: string) => readonly string[] | undefined;

/** A step ready for placeholder resolution: the plan step itself, or one of the steps it expanded into. */
export interface ExpandedStep {
  readonly id: string;
  readonly tool: string;
  /** Args that may still hold placeholders for `resolveArgs`; `[*]` and fanned-out refs are rewritten. */
  readonly args: Record<string, unknown>;
  readonly parentId?: string;
  readonly index?: number;
}

/** The steps one plan step becomes, or why it cannot be expanded. */
export type StepExpansion =
  | { readonly ok: true; readonly steps: ExpandedStep[]; readonly expanded: boolean }
  | { readonly ok: false; readonly error: UnresolvedArgs };

interface Source {
  readonly ref: PlaceholderRef;
  readonly stepId: string;
  readonly prefix: readonly Segment[];
}

type Counted =
  { readonly ok: true; readonly length: number } | { readonly ok: false; readonly message: string };

function expansionSources(refs: readonly PlaceholderRef[], plan: Plan): Map<string, Source> {
  const sources = new Map<string, Source>();
  for (const ref of refs) {
    const target = refTarget(ref, plan);
    if (!target.ok) continue;
    for (const [position, segment] of ref.path.entries()) {
      if (segment.kind !== 'expand') continue;
      const prefix = ref.path.slice(0, position);
      // `$a.items[*]` and `${a.data.items[*]}` are the same source: compare paths from the whole result.
      const key = `${target.stepId}${ref.form === 'short' ? '.data' : ''}${formatPath(prefix)}`;
      if (!sources.has(key)) sources.set(key, { ref, stepId: target.stepId, prefix });
    }
  }
  return sources;
}

function countItems(source: Source, lookup: StepLookup, children: ChildLookup, plan: Plan): Counted {
  const { ref, stepId, prefix } = source;
  if (prefix.some((segment) => segment.kind === 'map')) {
    return { ok: false, message: `${ref.raw}: [*] cannot follow .*` };
  }
  const siblings = children(stepId);
  if (siblings !== undefined) {
    const message = `${ref.raw}: step "${stepId}" was expanded into ${siblings.length} steps; [*] needs the array of one step`;
    return { ok: false, message };
  }
  const read = resolveRef({ ...ref, path: prefix, expands: false }, lookup, plan);
  if (!read.ok) return { ok: false, message: `${ref.raw}: ${read.reason}` };
  if (!Array.isArray(read.value)) {
    return { ok: false, message: `${ref.raw}: [*] needs an array, got ${describeValue(read.value)}` };
  }
  return { ok: true, length: read.value.length };
}

function fanOutTargets(refs: readonly PlaceholderRef[], children: ChildLookup, plan: Plan) {
  const targets = new Map<string, readonly string[]>();
  for (const ref of refs) {
    const target = refTarget(ref, plan);
    const ids = target.ok ? children(target.stepId) : undefined;
    if (target.ok && ids !== undefined) targets.set(target.stepId, ids);
  }
  return targets;
}

interface RewriteContext {
  readonly plan: Plan;
  readonly fanOut: ReadonlyMap<string, readonly string[]>;
  readonly isStepId: (id: string) => boolean;
}

function rewriteRef(ref: PlaceholderRef, index: number, context: RewriteContext): string {
  const path = ref.path.map((segment): Segment =>
    segment.kind === 'expand' ? { kind: 'index', index } : segment,
  );
  const target = refTarget(ref, context.plan);
  const child = target.ok ? context.fanOut.get(target.stepId)?.[index] : undefined;
  if (child === undefined) return formatRef({ ...ref, path });
  if (ref.form === 'short' && context.isStepId(child))
    return formatRef({ form: 'short', stepId: child, path });
  // A child id that does not read as `$<id>` keeps its meaning in the braced form, which reads the whole result.
  const wholePath: Segment[] = ref.form === 'short' ? [{ kind: 'key', key: 'data' }, ...path] : path;
  return formatRef({ form: 'braced', stepId: child, path: wholePath });
}

function rewriteArgs(step: PlanStep, index: number, context: RewriteContext): Record<string, unknown> {
  return mapArgStrings(step.args, (text) =>
    parseTemplate(text, context.isStepId)
      .map((part) => (part.kind === 'ref' ? rewriteRef(part.ref, index, context) : part.raw))
      .join(''),
  );
}

function count(amount: number, one: string, many = `${one}s`): string {
  return `${amount} ${amount === 1 ? one : many}`;
}

function unresolved(message: string): StepExpansion {
  return { ok: false, error: { code: 'args_unresolved', message } };
}

/**
 * Expand a step whose args hold `[*]` into one step per array item, and fan a step that reads an expanded
 * step out over that step's children; both at once pair by index and must have the same length. Ids are
 * `<id>-0`, `<id>-1`…; a step with neither comes back as it is, `expanded: false`. Never throws.
 */
export function expandStep(
  step: PlanStep,
  lookup: StepLookup,
  children: ChildLookup,
  plan: Plan,
): StepExpansion {
  const refs = parseArgs(step.args, plan).flatMap((part) => (part.kind === 'ref' ? [part.ref] : []));
  const sources = [...expansionSources(refs, plan).values()];
  if (sources.length > 1) {
    const names = sources.map((source) =>
      formatRef({ ...source.ref, path: [...source.prefix, { kind: 'expand' }] }),
    );
    return unresolved(
      `step "${step.id}" expands over more than one array (${names.join(', ')}); use one [*] source`,
    );
  }
  const lengths: { label: string; length: number }[] = [];
  const source = sources[0];
  if (source !== undefined) {
    const counted = countItems(source, lookup, children, plan);
    if (!counted.ok) return unresolved(counted.message);
    lengths.push({ label: `${source.ref.raw} has ${count(counted.length, 'item')}`, length: counted.length });
  }
  const fanOut = fanOutTargets(refs, children, plan);
  for (const [stepId, ids] of fanOut) {
    lengths.push({
      label: `step "${stepId}" has ${count(ids.length, 'child', 'children')}`,
      length: ids.length,
    });
  }
  const first = lengths[0];
  if (first === undefined)
    return { ok: true, steps: [{ id: step.id, tool: step.tool, args: step.args }], expanded: false };
  if (lengths.some((entry) => entry.length !== first.length)) {
    const labels = lengths.map((entry) => entry.label).join(', ');
    return unresolved(`step "${step.id}" cannot pair expansions of different lengths: ${labels}`);
  }
  const context: RewriteContext = { plan, fanOut, isStepId: placeholderIds(plan) };
  const steps = Array.from({ length: first.length }, (_, index) => ({
    id: childStepId(step.id, index),
    tool: step.tool,
    args: rewriteArgs(step, index, context),
    parentId: step.id,
    index,
  }));
  return { ok: true, steps, expanded: true };
}
