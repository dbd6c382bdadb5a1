/** What the platform can tell about a block whose send was in flight when the process died. */
export type SentLookup =
  | { readonly found: 'absent' }
  | { readonly found: 'present'; readonly platformMessageId: string }
  | { readonly found: 'unknown' };

/** Where one chat's replies go: the few platform calls a delivery needs. */
export interface ReplyTarget {
  /** Post a new message; resolves the platform's id of it. */
  post(text: string): Promise<string>;
  /**
   * Replace a message's text (platforms that can edit). When present, a run's blocks stream into one message
   * (edited as they come) up to `editLimit` characters; absent, each block is its own message.
   */
  edit?(platformMessageId: string, text: string): Promise<void>;
  /**
   * The longest message a reply may grow to, measured by `measure`: a streamed reply starts a new message past
   * it, and a longer block is split into several. @default 4000
   */
  readonly editLimit?: number;
  /**
   * The length the platform counts `text` at as it is sent (after formatting, e.g. Markdown escaping).
   * @default text.length
   */
  readonly measure?: (text: string) => number;
  /** Whether a message carrying `text` was posted since `since` (ms); absent: the platform cannot tell. */
  lookup?(text: string, since: number): Promise<SentLookup>;
  /** Show that the bot is writing (platforms with a typing indicator); repeated while a run streams. */
  typing?(): Promise<void>;
}

/** The platform target of a session key; undefined for a session this adapter does not serve. */
export type TargetResolver = (sessionKey: string) => ReplyTarget | undefined;

/** The text a chat sees when a run crashed mid-reply (its messages are not run again). */
export const defaultInterruptedNotice =
  '(Interrupted: the bot restarted while answering. Please send your message again.)';

/** The text a chat sees when its run failed (every model and key tried) or timed out. */
export const defaultFailureNotice = '(Sorry, I could not answer that. Please try again later.)';
