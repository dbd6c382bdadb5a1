// Placeholder grammar in args strings (only strings; keys are never read):
//   $<id><path>        short: reads <id>'s `data`; a placeholder only when the whole run of id characters
//                      names a plan step or a child of one (`fetch-0`), so "costs $5" stays text.
//   ${step[N]<path>}   braced: reads the whole result `{ stepId, success, data, error, metadata }` of the
//   ${<id><path>}      plan's N-th step (0-based) or of <id>. Braces are always a placeholder; a bad one is an error.
//   <path>             `.name`, `[0]`, `.*` (map the rest of the path over an array), `[*]` (expansion only).
//   $$                 a literal `$` (write `$${` for a literal "${").

/** One step of a placeholder path. */
export type Segment =
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'map' }
  | { readonly kind: 'expand' };

/**
 * A placeholder found in an args string. `short` (`$id.path`) reads from the step's `data`; `braced`
 * (`${step[N].path}` or `${id.path}`) reads from the step's whole result.
 */
export interface PlaceholderRef {
  readonly raw: string;
  readonly form: 'short' | 'braced';
  readonly stepId?: string;
  readonly stepIndex?: number;
  readonly path: readonly Segment[];
  readonly expands: boolean;
}

/** A piece of a parsed args string: literal text (`raw` keeps `$$` escapes), a placeholder, or a bad `${…}`. */
export type TemplatePart =
  | { readonly kind: 'text'; readonly raw: string; readonly text: string }
  | { readonly kind: 'ref'; readonly raw: string; readonly ref: PlaceholderRef }
  | { readonly kind: 'malformed'; readonly raw: string; readonly reason: string };

const idChar = /[A-Za-z0-9_-]/;
const bracket = /^\[(\d+|\*)\]/;

function readRun(source: string, from: number): string {
  let end = from;
  while (end < source.length && idChar.test(source.charAt(end))) end += 1;
  return source.slice(from, end);
}

/** Read path segments from `from`; stops (without failing) at the first text that is not one. */
function readPath(source: string, from: number): { path: Segment[]; end: number } {
  const path: Segment[] = [];
  let at = from;
  for (;;) {
    if (source.startsWith('.*', at)) {
      path.push({ kind: 'map' });
      at += 2;
      continue;
    }
    const name = source.charAt(at) === '.' ? readRun(source, at + 1) : '';
    if (name !== '') {
      path.push({ kind: 'key', key: name });
      at += 1 + name.length;
      continue;
    }
    const index = bracket.exec(source.slice(at))?.[1];
    if (index === undefined) return { path, end: at };
    path.push(index === '*' ? { kind: 'expand' } : { kind: 'index', index: Number(index) });
    at += index.length + 2;
  }
}

function makeRef(raw: string, form: PlaceholderRef['form'], head: string | number, path: Segment[]) {
  const target = typeof head === 'number' ? { stepIndex: head } : { stepId: head };
  const expands = path.some((segment) => segment.kind === 'expand');
  return { raw, form, ...target, path, expands } satisfies PlaceholderRef;
}

/** `step[N]` (always the index form, even if a step is called `step`) or a step id. */
function readHead(body: string): { target: string | number; length: number } | undefined {
  const indexed = /^step\[(\d+)\]/.exec(body);
  if (indexed?.[1] !== undefined) return { target: Number(indexed[1]), length: indexed[0].length };
  const id = readRun(body, 0);
  return id === '' ? undefined : { target: id, length: id.length };
}

function readBraced(source: string, start: number): { part: TemplatePart; end: number } {
  const close = source.indexOf('}', start + 2);
  if (close === -1) {
    const raw = source.slice(start);
    return { part: { kind: 'malformed', raw, reason: 'missing "}"' }, end: source.length };
  }
  const raw = source.slice(start, close + 1);
  const body = source.slice(start + 2, close);
  const head = readHead(body);
  if (head === undefined) {
    return {
      part: { kind: 'malformed', raw, reason: 'expected step[N] or a step id after "${"' },
      end: close + 1,
    };
  }
  const { path, end } = readPath(body, head.length);
  if (end < body.length) {
    const reason = `unexpected "${body.slice(end)}" in placeholder path`;
    return { part: { kind: 'malformed', raw, reason }, end: close + 1 };
  }
  return { part: { kind: 'ref', raw, ref: makeRef(raw, 'braced', head.target, path) }, end: close + 1 };
}

/**
 * Split an args string into text and placeholders. `$$` is a literal `$`; `${…}` is always a placeholder;
 * `$<id>` is one only when `isStepId(<id>)` (the whole run of id characters), otherwise literal text.
 */
export function parseTemplate(source: string, isStepId: (id: string) => boolean): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let raw = '';
  let text = '';
  const flush = (): void => {
    if (raw !== '') parts.push({ kind: 'text', raw, text });
    raw = '';
    text = '';
  };
  let at = 0;
  while (at < source.length) {
    const char = source.charAt(at);
    const next = source.charAt(at + 1);
    if (char === '$' && next === '$') {
      raw += '$$';
      text += '$';
      at += 2;
      continue;
    }
    if (char === '$' && next === '{') {
      flush();
      const { part, end } = readBraced(source, at);
      parts.push(part);
      at = end;
      continue;
    }
    const id = char === '$' ? readRun(source, at + 1) : '';
    if (id !== '' && isStepId(id)) {
      flush();
      const { path, end } = readPath(source, at + 1 + id.length);
      const refRaw = source.slice(at, end);
      parts.push({ kind: 'ref', raw: refRaw, ref: makeRef(refRaw, 'short', id, path) });
      at = end;
      continue;
    }
    raw += char;
    text += char;
    at += 1;
  }
  flush();
  return parts;
}

/** Write a path back in placeholder syntax: `.name`, `[0]`, `.*`, `[*]`. */
export function formatPath(path: readonly Segment[]): string {
  return path
    .map((segment) => {
      switch (segment.kind) {
        case 'key':
          return `.${segment.key}`;
        case 'index':
          return `[${segment.index}]`;
        case 'map':
          return '.*';
        case 'expand':
          return '[*]';
      }
    })
    .join('');
}

/** Write a placeholder back as text, in its own form. */
export function formatRef(ref: Omit<PlaceholderRef, 'raw' | 'expands'>): string {
  const path = formatPath(ref.path);
  if (ref.form === 'short') return `$${ref.stepId ?? ''}${path}`;
  const head = ref.stepIndex === undefined ? (ref.stepId ?? '') : `step[${ref.stepIndex}]`;
  return `\${${head}${path}}`;
}
