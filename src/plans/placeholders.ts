import { RuntimeError } from '../core/index.js';
import { forEachString, mapArgStrings } from './arg-strings.js';
import { parseTemplate } from './placeholder-syntax.js';
import type { PlaceholderRef, TemplatePart } from './placeholder-syntax.js';
import type { Plan } from './plan-schema.js';
import { planStepIds, rootStepId } from './step-ids.js';
import type { StepLookup, StepResult } from './step-result.js';
import { readValuePath } from './value-path.js';
import type { PathRead } from './value-path.js';

/** Why a step's args could not be resolved. */
export interface UnresolvedArgs {
  readonly code: 'args_unresolved';
  readonly message: string;
}

/** Resolved args, or why they are not. */
export type ArgsResolution =
  | { readonly ok: true; readonly args: Record<string, unknown> }
  | { readonly ok: false; readonly error: UnresolvedArgs };

/** Which `$<id>` runs are placeholders in this plan: plan step ids and their children (`<id>-<n>`). */
export function placeholderIds(plan: Plan): (id: string) => boolean {
  const ids = planStepIds(plan);
  return (id) => rootStepId(id, ids) !== undefined;
}

/** Parse every string in `args`, in key order. */
export function parseArgs(args: unknown, plan: Plan): TemplatePart[] {
  const isStepId = placeholderIds(plan);
  const parts: TemplatePart[] = [];
  forEachString(args, (text) => parts.push(...parseTemplate(text, isStepId)));
  return parts;
}

/** Every placeholder in `args` (at any depth), in order; throws `invalid_input` for a malformed `${…}`. */
export function findReferences(args: unknown, plan: Plan): PlaceholderRef[] {
  return parseArgs(args, plan).flatMap((part) => {
    if (part.kind === 'malformed') throw new RuntimeError('invalid_input', `${part.raw}: ${part.reason}`);
    return part.kind === 'ref' ? [part.ref] : [];
  });
}

/** The step id a placeholder points at, or why it points nowhere. */
export type RefTarget =
  { readonly ok: true; readonly stepId: string } | { readonly ok: false; readonly reason: string };

/** Where a placeholder points: `step[N]` becomes the plan's N-th id; an id is taken as written. */
export function refTarget(ref: PlaceholderRef, plan: Plan): RefTarget {
  if (ref.stepIndex === undefined) return { ok: true, stepId: ref.stepId ?? '' };
  const step = plan.steps[ref.stepIndex];
  if (step !== undefined) return { ok: true, stepId: step.id };
  return {
    ok: false,
    reason: `step[${ref.stepIndex}] is out of range (plan has ${plan.steps.length} steps)`,
  };
}

/**
 * The plan step ids `args` reads from, a child id (`fetch-0`) counting as its plan step (`fetch`).
 * Throws `invalid_input` for a `${…}` naming an unknown step, an index out of range, or a malformed `${…}`.
 */
export function referencedSteps(args: unknown, plan: Plan): Set<string> {
  const ids = planStepIds(plan);
  const steps = new Set<string>();
  for (const ref of findReferences(args, plan)) {
    const target = refTarget(ref, plan);
    if (!target.ok) throw new RuntimeError('invalid_input', `${ref.raw}: ${target.reason}`);
    const root = rootStepId(target.stepId, ids);
    if (root === undefined)
      throw new RuntimeError('invalid_input', `${ref.raw}: unknown step "${target.stepId}"`);
    steps.add(root);
  }
  return steps;
}

/** A failed step has no data to read: short placeholders always read data, braced ones when they say `.data`. */
function readsFailedData(ref: PlaceholderRef, result: StepResult): boolean {
  if (result.success) return false;
  const first = ref.path[0];
  return ref.form === 'short' || (first?.kind === 'key' && first.key === 'data');
}

/** Read one placeholder's value from the results so far; the reason says why not when it cannot. */
export function resolveRef(ref: PlaceholderRef, lookup: StepLookup, plan: Plan): PathRead {
  const target = refTarget(ref, plan);
  if (!target.ok) return target;
  const { stepId } = target;
  const result = lookup(stepId);
  if (result === undefined) return { ok: false, reason: `step "${stepId}" has no result` };
  if (readsFailedData(ref, result)) {
    const cause = result.error === undefined ? '' : ` (${result.error.code}: ${result.error.message})`;
    return { ok: false, reason: `step "${stepId}" failed${cause}` };
  }
  if (ref.form === 'braced') return readValuePath(result, ref.path);
  if (result.data === undefined) return { ok: false, reason: `step "${stepId}" has no data` };
  return readValuePath(result.data, ref.path);
}

/** A copy, so a tool that mutates its args cannot change the stored results later steps read. */
function detached(value: unknown): unknown {
  try {
    return structuredClone(value);
  } catch {
    // Functions and the like cannot be cloned; they are passed as they are.
    return value;
  }
}

function interpolate(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function resolveString(text: string, lookup: StepLookup, plan: Plan, isStepId: (id: string) => boolean) {
  const parts = parseTemplate(text, isStepId);
  let output = '';
  for (const part of parts) {
    if (part.kind === 'text') {
      output += part.text;
      continue;
    }
    if (part.kind === 'malformed') return { ok: false, reason: `${part.raw}: ${part.reason}` } as const;
    const read = resolveRef(part.ref, lookup, plan);
    if (!read.ok) return { ok: false, reason: `${part.raw}: ${read.reason}` } as const;
    if (parts.length === 1) return { ok: true, value: detached(read.value) } as const;
    output += interpolate(read.value);
  }
  return { ok: true, value: output } as const;
}

/**
 * Replace every placeholder in `args` with its value: a string that is exactly one placeholder becomes the
 * value itself (number, object…), one inside longer text is interpolated (non-strings as JSON), `$$`
 * becomes `$`. Returns new args; never throws: an unresolvable placeholder gives `args_unresolved`.
 */
export function resolveArgs(
  args: Readonly<Record<string, unknown>>,
  lookup: StepLookup,
  plan: Plan,
): ArgsResolution {
  const isStepId = placeholderIds(plan);
  let failure: string | undefined;
  const resolved = mapArgStrings(args, (text) => {
    if (failure !== undefined) return text;
    const outcome = resolveString(text, lookup, plan, isStepId);
    if (outcome.ok) return outcome.value;
    failure = outcome.reason;
    return text;
  });
  if (failure === undefined) return { ok: true, args: resolved };
  return { ok: false, error: { code: 'args_unresolved', message: failure } };
}
