import { scrubSecrets } from '../../core/index.js';

/**
 * A bot token in a URL segment, raw or URL-encoded (Telegram's `bot<id>:<secret>`, as in
 * `…/bot123:AA…/sendMessage` or `…/file/bot123:AA…/photos/1.jpg`): masked even when the token is not known.
 */
const tokenSegmentPattern = /bot\d+(?::|%3a)[\w-]+/gi;

/** Hides the secrets an adapter knows (its bot token) in every text and error it logs, rethrows or records. */
export interface SecretScrubber {
  /** `text` with every known secret and every `bot<id>:<secret>` URL segment masked. */
  readonly text: (text: string) => string;
  /**
   * The error itself when nothing in it (message, stack, causes) holds a secret; otherwise a new `Error` of the
   * same name whose message tells the whole chain of causes, scrubbed, and which keeps no cause object (a
   * logger prints a cause's own properties, such as the URL a fetch failed on).
   */
  readonly error: (error: unknown) => unknown;
  /** A failure handler that hands `handler` the scrubbed error. */
  readonly wrap: (handler: (error: unknown) => void) => (error: unknown) => void;
}

/** The message of an error and of each of its causes (`cause`, and grammY's `HttpError.error`), joined. */
export function describeError(error: unknown, depth = 0): string {
  if (!(error instanceof Error)) return String(error);
  const inner: unknown = error.cause ?? (error as { error?: unknown }).error;
  const own = error.message === '' ? error.name : error.message;
  if (inner === undefined || inner === null || depth >= 4) return own;
  return `${own} (${describeError(inner, depth + 1)})`;
}

/** All the text a logger could print of an error: its chain of messages and its stack. */
function printable(error: unknown): string {
  return error instanceof Error ? `${describeError(error)}\n${error.stack ?? ''}` : String(error);
}

/**
 * A scrubber for the secrets `secrets()` gives (read at each use: an adapter may learn its token late), plus
 * the generic bot-token URL segment. Uses the runtime's own `scrubSecrets` (raw, URL-encoded, JSON-escaped
 * forms and long runs of a secret).
 */
export function createSecretScrubber(secrets: () => Iterable<string>): SecretScrubber {
  const text = (value: string): string =>
    scrubSecrets(value, secrets()).replace(tokenSegmentPattern, 'bot***');
  const error = (value: unknown): unknown => {
    const raw = printable(value);
    if (text(raw) === raw) return value;
    const scrubbed = new Error(text(describeError(value)));
    if (value instanceof Error) scrubbed.name = value.name;
    const frames = value instanceof Error ? (value.stack ?? '').split('\n').slice(1) : [];
    scrubbed.stack = [`${scrubbed.name}: ${scrubbed.message}`, ...frames.map(text)].join('\n');
    return scrubbed;
  };
  return {
    text,
    error,
    wrap: (handler) => (value) => handler(error(value)),
  };
}
