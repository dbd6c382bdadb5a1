/** An open code fence: how to close it and how to reopen it in the next block. */
export interface FenceInfo {
  /** Index of the newline that ends the opening line. */
  readonly openEnd: number;
  /** The opening line without indentation, e.g. "```ts"; reopens the fence in the next block. */
  readonly opener: string;
  /** The fence marker, e.g. "```"; closes the fence at the end of a block. */
  readonly closer: string;
}

/** A stretch of text no soft break may fall inside: a code fence, or a line that may start one. */
export interface BreakGuard {
  /** Index of the first character of the guarded line(s); a break exactly here is allowed. */
  readonly start: number;
  /** Index of the newline ending the last guarded line (a break here is allowed); Infinity while open. */
  readonly end: number;
  /** Index of the first character of a fence's closing line; Infinity while open or when not a fence. */
  readonly closeStart: number;
  /** Set when the guard is a fence whose content may be split (and closed / reopened) if it must. */
  readonly fence?: FenceInfo;
}

const fenceLine = /^[ \t]*(`{3,}|~{3,})(.*)$/;
// A line still being streamed that may yet become a fence line: indentation and one or two marker chars.
const fencePrefix = /^[ \t]*(`{1,2}|~{1,2})$/;

/** True when `position` lies strictly inside `guard`. */
export function isInside(guard: BreakGuard | undefined, position: number): boolean {
  return guard !== undefined && guard.start < position && position < guard.end;
}

/**
 * The guards of `text`, in order, scanning lines that start at or before `limit`. When `atLineStart` is
 * false the text begins mid-line, so its first line cannot open a fence.
 */
export function scanBreakGuards(text: string, limit: number, atLineStart: boolean): BreakGuard[] {
  const guards: BreakGuard[] = [];
  let open: { start: number; fence: FenceInfo } | undefined;
  let lineStart = atLineStart ? 0 : text.indexOf('\n') + 1 || text.length;
  while (lineStart < text.length && lineStart <= limit) {
    const newline = text.indexOf('\n', lineStart);
    const complete = newline !== -1;
    const lineEnd = complete ? newline : text.length;
    const line = text.slice(lineStart, lineEnd);
    if (open !== undefined) {
      if (closesFence(line, open.fence.closer)) {
        const end = complete ? lineEnd : Infinity;
        guards.push({ start: open.start, end, closeStart: lineStart, fence: open.fence });
        open = undefined;
      }
    } else if (!complete) {
      if (fenceLine.test(line) || fencePrefix.test(line))
        guards.push({ start: lineStart, end: Infinity, closeStart: Infinity });
    } else {
      const match = fenceLine.exec(line);
      const marker = match?.[1] ?? '';
      const info = match?.[2] ?? '';
      if (match !== null && (marker.startsWith('~') || !info.includes('`'))) {
        const fence = { openEnd: lineEnd, opener: `${marker}${info}`.trimEnd(), closer: marker };
        open = { start: lineStart, fence };
      } else if (match !== null) {
        // Inline code such as "```a``` b" opens no fence, but is still never broken mid-line.
        guards.push({ start: lineStart, end: lineEnd, closeStart: Infinity });
      }
    }
    if (!complete) break;
    lineStart = lineEnd + 1;
  }
  if (open !== undefined)
    guards.push({ start: open.start, end: Infinity, closeStart: Infinity, fence: open.fence });
  return guards;
}

function closesFence(line: string, closer: string): boolean {
  const trimmed = line.trim();
  const char = closer.charAt(0);
  if (trimmed.length < closer.length) return false;
  for (const c of trimmed) if (c !== char) return false;
  return true;
}
