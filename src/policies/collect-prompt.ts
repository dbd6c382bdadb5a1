/** The first line of a collect run's prompt. */
export const collectHeader = '[Queued messages while agent was busy]';

/** Where a message came from and its sender's role; messages are merged into one run only when all match. */
export interface MessageOrigin {
  readonly channel?: string | undefined;
  readonly thread?: string | undefined;
  readonly role?: string | undefined;
}

/** Options of `buildCollectPrompt`. */
export interface CollectPromptOptions {
  /** One-line summaries of messages the cap dropped, to be announced first. @default [] */
  readonly dropped?: readonly string[] | undefined;
  /** How many more messages were dropped after those `dropped` lists (their summaries were not kept). @default 0 */
  readonly droppedOmitted?: number | undefined;
}

/**
 * The "Dropped N message(s) due to cap:" block listing each kept summary, then "… and N more" for the drops that
 * have no line of their own; empty when nothing was dropped.
 */
export function buildDroppedNotice(dropped: readonly string[], omitted = 0): string {
  if (dropped.length === 0 && omitted <= 0) return '';
  const lines = dropped.map((summary) => `- ${summary}`);
  const unlisted = omitted > 0 ? [`- … and ${omitted} more`] : [];
  return [
    `Dropped ${dropped.length + Math.max(0, omitted)} message(s) due to cap:`,
    ...lines,
    ...unlisted,
  ].join('\n');
}

/** The prompt of a collect run: optional dropped notice, a header, then each message as `Queued #n`. */
export function buildCollectPrompt(
  items: readonly { readonly text: string }[],
  options: CollectPromptOptions = {},
): string {
  const sections = items.map((item, index) => `---\nQueued #${index + 1}\n${item.text}`);
  const body = [collectHeader, ...sections].join('\n\n');
  const notice = buildDroppedNotice(options.dropped ?? [], options.droppedOmitted ?? 0);
  return notice === '' ? body : `${notice}\n\n${body}`;
}

/** One line of at most `max` characters: whitespace collapsed, trimmed, cut with '…' when too long. */
export function summarizeMessage(text: string, max = 160): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line.length <= max) return line;
  if (max < 1) return '';
  let end = max - 1;
  // Never leave half of a surrogate pair before the ellipsis.
  if (end > 0 && isHighSurrogate(line.charCodeAt(end - 1))) end -= 1;
  return `${line.slice(0, end)}…`;
}

/**
 * True when two messages share channel, thread and sender role, so they may run together: a run runs with the
 * authority of its messages, so messages of different authority never share one.
 */
export function canMerge(a: MessageOrigin, b: MessageOrigin): boolean {
  return a.channel === b.channel && a.thread === b.thread && a.role === b.role;
}

/** Split the queue into the longest prefix that may merge with its first item, and the rest. */
export function takeCollectBatch<T extends MessageOrigin>(queue: readonly T[]): { batch: T[]; rest: T[] } {
  const first = queue[0];
  if (first === undefined) return { batch: [], rest: [] };
  let end = 1;
  while (end < queue.length && canMerge(first, queue[end] as T)) end += 1;
  return { batch: queue.slice(0, end), rest: queue.slice(end) };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
