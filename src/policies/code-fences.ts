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

/** The guards found in a text, and where a line starts whose kind the next characters will decide. */
export interface GuardScan {
  readonly guards: BreakGuard[];
  /** Start of a last, unfinished line that may yet open or close a fence; Infinity when there is none. */
  readonly pendingFrom: number;
}

/**
 * Scan the lines of `text` that start at or before `limit` for guards. When `atLineStart` is false the text
 * begins mid-line, so its first line cannot open a fence; when `final` is true the text is complete.
 */
export function scanBreakGuards(
  text: string,
  limit: number,
  atLineStart: boolean,
  final: boolean,
): GuardScan {
  const guards: BreakGuard[] = [];
  let pendingFrom = Infinity;
  let open: { start: number; fence: FenceInfo } | undefined;
  let lineStart = atLineStart ? 0 : text.indexOf('\n') + 1 || text.length;
  while (lineStart < text.length && lineStart <= limit) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd);
    const complete = newline !== -1 || final;
    if (open !== undefined && complete) {
      if (closesFence(line, open.fence.closer)) {
        guards.push({ start: open.start, end: lineEnd, closeStart: lineStart, fence: open.fence });
        open = undefined;
      }
    } else if (open !== undefined) {
      if (mayCloseFence(line, open.fence.closer)) pendingFrom = lineStart;
    } else {
      const match = fenceLine.exec(line);
      const marker = match?.[1] ?? '';
      const info = match?.[2] ?? '';
      if (match !== null && complete && (marker.startsWith('~') || !info.includes('`'))) {
        open = {
          start: lineStart,
          fence: { openEnd: lineEnd, opener: `${marker}${info}`.trimEnd(), closer: marker },
        };
      } else if (match !== null) {
        // Inline code such as "```a``` b" opens no fence, but its line is still never broken.
        guards.push({ start: lineStart, end: complete ? lineEnd : Infinity, closeStart: Infinity });
      } else if (!complete && fencePrefix.test(line)) {
        guards.push({ start: lineStart, end: Infinity, closeStart: Infinity });
        pendingFrom = lineStart;
      }
    }
    if (newline === -1) break;
    lineStart = lineEnd + 1;
  }
  if (open !== undefined) {
    guards.push({ start: open.start, end: Infinity, closeStart: Infinity, fence: open.fence });
  }
  return { guards, pendingFrom };
}

function closesFence(line: string, closer: string): boolean {
  const trimmed = line.trim();
  return trimmed.length >= closer.length && mayCloseFence(trimmed, closer);
}

// True while the line so far could still be a closing line: closer characters between optional whitespace.
function mayCloseFence(line: string, closer: string): boolean {
  const char = closer.charAt(0);
  for (const c of line.trim()) if (c !== char) return false;
  return true;
}
