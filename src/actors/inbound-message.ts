import { z } from 'zod';
import { partModes, storableString, roleNamePattern, RuntimeError } from '../core/index.js';
import { queueSettingsSchema, type QueueSettingsInput } from '../policies/index.js';

/** A media type as `type/subtype` (parameters are not taken). */
const mediaTypeSchema = z
  .string()
  .max(255)
  .regex(
    /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i,
    'expected a media type like "image/png"',
  )
  .transform((value) => value.toLowerCase());

/** `file` (stored in the session's workspace, referenced by path in the prompt) or `inline` (in the model's context). */
const modeSchema = z.enum(partModes).default('file');
const nameSchema = storableString().min(1).max(255);

/** One content part of an inbound message (docs/attachments.md). */
export const messagePartSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: storableString().min(1).max(200_000) }).strict(),
  z
    .object({
      type: z.literal('url'),
      /** An http(s) address, downloaded into the workspace (both modes). */
      url: storableString().min(1).max(8192),
      mode: modeSchema,
      name: nameSchema.optional(),
      /** When given, the response's content type must be this one. */
      mediaType: mediaTypeSchema.optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('file'),
      /**
       * A file of the session's own workspace directory, by a path relative to it (no absolute path, no `..`, no
       * link out of it; never another session's file or the blob store); its bytes are stored like any part's.
       */
      path: storableString().min(1).max(4096),
      mode: modeSchema,
      name: nameSchema.optional(),
      /** @default from the file name's extension, else application/octet-stream */
      mediaType: mediaTypeSchema.optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('binary'),
      /** The bytes, or the bytes base64-encoded. */
      data: z.union([z.instanceof(Uint8Array), z.base64()]),
      mediaType: mediaTypeSchema,
      name: nameSchema,
      mode: modeSchema,
    })
    .strict(),
]);

/** A content part as callers pass it. */
export type MessagePartInput = z.input<typeof messagePartSchema>;
/** A validated content part. */
export type MessagePart = z.output<typeof messagePartSchema>;

/** Media types guessed from a file name's extension, for `file` parts that do not say theirs. */
const mediaTypesByExtension: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  html: 'text/html',
};

/** The media type of a file name by its extension; `application/octet-stream` when unknown. */
export function mediaTypeOfName(name: string): string {
  const extension = name.includes('.') ? (name.split('.').at(-1) ?? '').toLowerCase() : '';
  return Object.hasOwn(mediaTypesByExtension, extension)
    ? (mediaTypesByExtension[extension] as string)
    : 'application/octet-stream';
}

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
