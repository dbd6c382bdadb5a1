import { z } from 'zod';
import { roleNamePattern } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import { storableString } from '../core/index.js';
import { queueSettingsSchema, type QueueSettingsInput } from '../policies/index.js';
import { messagePartSchema } from './message-parts.js';

/**
 * A string every ledger stores as it is: no lone surrogate (it would be stored as a replacement character) and no
 * U+0000 (Postgres cannot hold it, SQLite can: refused at the door so both ledgers take the same inputs).
 */
export const wellFormed = storableString;

/** An inbound chat message as a bot hands it over. */
export const inboundMessageSchema = z
  .object({
    /** The platform's message id; redelivery of an id within 5 minutes is answered `duplicate`. */
    id: wellFormed().min(1).max(256).optional(),
    text: wellFormed().min(1).max(200_000).optional(),
    /**
     * Who sent it; `role` is one of the runtime's roles (`authority.roles`, the built-in `owner`, `admin`, `member`,
     * `guest` by default) and the message runs with at most that authority (none named: `authority.defaultRole`).
     */
    sender: z
      .object({
        id: wellFormed().min(1).max(256),
        name: wellFormed().max(256).optional(),
        role: z
          .string()
          .regex(roleNamePattern, 'a role is a letter, then letters, digits, _ or -')
          .optional(),
      })
      .strict()
      .optional(),
    /** The channel (platform) it came from; defaults to the part of the session key before ':'. */
    channel: wellFormed().min(1).max(128).optional(),
    /** A thread within the chat; messages of different threads are never merged into one run. */
    thread: wellFormed().min(1).max(256).optional(),
    /** Content parts after the text (docs/attachments.md); with parts, `text` may be left out. */
    parts: z.array(messagePartSchema).min(1).max(64).optional(),
    /**
     * The W3C trace context (`traceparent`) of the code that sent the message, carried to its run (on whichever
     * worker runs it) so traces link the two; `withTraceContext` of `agentlanes/otel` sets it.
     */
    traceparent: z
      .string()
      .regex(/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/, 'a W3C traceparent')
      .optional(),
  })
  .strict();

/** What `send()` takes: the message's text, or the message. */
export type InboundMessageInput = string | z.input<typeof inboundMessageSchema>;
/** A validated inbound message; `text` is '' when only parts were sent. */
export type InboundMessage = Omit<z.output<typeof inboundMessageSchema>, 'text'> & { readonly text: string };

/** The schema `parseInboundMessage` applies: a message needs text or parts. */
const messageWithContent = inboundMessageSchema.refine(
  (message) => message.text !== undefined || message.parts !== undefined,
  { message: 'a message needs text or parts', path: ['text'] },
);

const sessionKeySchema = wellFormed().min(1).max(512);

function invalid(what: string, error: z.ZodError): RuntimeError {
  return new RuntimeError('invalid_input', `${what}: ${z.prettifyError(error)}`, { cause: error });
}

/** Validate a session key; bad keys throw `invalid_input`. */
export function parseSessionKey(key: unknown): string {
  const parsed = sessionKeySchema.safeParse(key);
  if (!parsed.success) throw invalid('session key', parsed.error);
  return parsed.data;
}

/** Validate an inbound message; a plain string is a message with only text. */
export function parseInboundMessage(input: unknown): InboundMessage {
  const parsed = messageWithContent.safeParse(typeof input === 'string' ? { text: input } : input);
  if (!parsed.success) throw invalid('send: message', parsed.error);
  return { ...parsed.data, text: parsed.data.text ?? '' };
}

/** Validate queue settings (per message, or a session's `configure`); omitted is none, `null` is refused. */
export function parseQueueSettings(what: string, input: unknown): QueueSettingsInput {
  const parsed = queueSettingsSchema.safeParse(input === undefined ? {} : input);
  if (!parsed.success) throw invalid(what, parsed.error);
  return parsed.data;
}
