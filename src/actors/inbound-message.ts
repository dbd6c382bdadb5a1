import { z } from 'zod';
import { partModes, storableString, roleNamePattern, RuntimeError } from '../core/index.js';
import type { AttachmentRef, StoredPart, Clock } from '../core/index.js';
import { queueSettingsSchema, type QueueSettingsInput } from '../policies/index.js';
import {
  bareMediaType,
  inlineKindOf,
  inlineKindsFor,
  refuseInline,
  type InlineCandidate,
  type InlineCapability,
} from '../policies/index.js';
import type { ModelProvider } from '../providers/index.js';
import { describeUrl, downloadPart, safeFileName, type WorkspaceStore } from '../tools/index.js';
import type { AttachmentsConfig } from './attachment-options.js';

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

/** The attachment side of admission: checks before anything is stored, then the store itself. */
export interface MessageAttachments {
  /** Refuse what can be refused without I/O: inline parts the models cannot take, oversized binary parts. */
  check(parts: readonly MessagePart[] | undefined): void;
  /** Read, check and store a message's parts; `undo` removes what this call stored. Nothing is stored on refusal. */
  store(sessionKey: string, parts: readonly MessagePart[]): Promise<StoredParts>;
}

/** A message's stored parts, and how to take them back when the message is not accepted after all. */
export interface StoredParts {
  readonly parts: readonly StoredPart[];
  readonly undo: () => Promise<void>;
}

/** What `createMessageAttachments` takes. */
export interface MessageAttachmentsDeps {
  readonly limits: AttachmentsConfig;
  readonly workspace: WorkspaceStore;
  readonly clock: Clock;
  readonly providers: Readonly<Record<string, ModelProvider>>;
  readonly models: readonly { readonly provider: string; readonly model: string }[];
}

/** A part read into memory, not stored yet. */
type LoadedPart =
  | { readonly type: 'text'; readonly text: string }
  | (Omit<AttachmentRef, 'sha256' | 'path' | 'size'> & { readonly bytes: Uint8Array });

function tooBig(what: string, size: number, limit: number): RuntimeError {
  return new RuntimeError('invalid_input', `${what} has ${size} bytes, more than the limit of ${limit}`, {
    details: { size, limit },
  });
}

/** The models a run may use and what each takes inline (the runtime's overrides first). */
function inlineCandidates(deps: MessageAttachmentsDeps): InlineCandidate[] {
  return deps.models.map(({ provider, model }) => {
    const overrides: InlineCapability[] = Object.entries(deps.limits.inline)
      .filter(([key]) => key.slice(0, key.indexOf('/')) === provider)
      .map(([key, accepts]) => ({ model: key.slice(key.indexOf('/') + 1), accepts }));
    const own = deps.providers[provider]?.inlineCapabilities ?? [];
    return { provider, model, accepts: inlineKindsFor(model, [overrides, own]) };
  });
}

/** Refuse an inline part of `mediaType` unless every model a run may use takes its kind. */
function checkInline(candidates: readonly InlineCandidate[], mediaType: string, name: string): void {
  const kind = inlineKindOf(mediaType);
  if (kind === undefined) {
    throw new RuntimeError(
      'unsupported_content',
      `part "${name}": no model takes ${bareMediaType(mediaType)} inline (send it with mode 'file')`,
      { details: { mediaType } },
    );
  }
  const refusal = refuseInline([kind], candidates);
  if (refusal === undefined) return;
  throw new RuntimeError(
    'unsupported_content',
    `part "${name}": model ${refusal.provider}/${refusal.model} does not take ${kind} content inline`,
    { details: { ...refusal, mediaType } },
  );
}

function binaryBytes(data: Uint8Array | string): Uint8Array {
  return typeof data === 'string' ? Buffer.from(data, 'base64') : data;
}

/** A URL's last path segment, as the name of a downloaded part. */
function nameOfUrl(address: string): string {
  const segment = new URL(address).pathname
    .split('/')
    .filter((piece) => piece.length > 0)
    .at(-1);
  if (segment === undefined) return 'download';
  try {
    return safeFileName(decodeURIComponent(segment), 'download');
  } catch {
    return safeFileName(segment, 'download'); // a malformed escape: the segment as it is
  }
}

/** A `file` part: only a file of the session's own directory (the store refuses anything else, one way). */
async function loadFile(
  deps: MessageAttachmentsDeps,
  sessionKey: string,
  part: Extract<MessagePart, { type: 'file' }>,
  budget: number,
): Promise<LoadedPart> {
  const file = await deps.workspace.openSessionFile(sessionKey, part.path);
  let bytes: Uint8Array;
  try {
    if (file.size > budget) throw tooBig(`file part "${part.path}"`, file.size, budget);
    bytes = await file.read();
  } finally {
    await file.close();
  }
  const name = safeFileName(part.name ?? part.path);
  const mediaType = part.mediaType ?? mediaTypeOfName(name);
  return { type: 'attachment', source: 'file', mode: part.mode, name, mediaType, bytes };
}

async function loadUrl(
  deps: MessageAttachmentsDeps,
  part: Extract<MessagePart, { type: 'url' }>,
  budget: number,
): Promise<LoadedPart> {
  const limits = {
    timeoutMs: deps.limits.downloadTimeoutMs,
    maxBytes: budget,
    mediaTypes: deps.limits.downloadMediaTypes,
    mediaType: part.mediaType,
    policy: deps.limits.fetch,
  };
  // Every failure (a declared type the answer does not have too) is the one refusal of docs/attachments.md.
  const download = await downloadPart(part.url, limits, deps.clock);
  const name = safeFileName(part.name ?? nameOfUrl(part.url));
  const { mediaType, bytes } = download;
  // The address is not kept: it may carry a credential (a signed URL, a bot token in the path).
  return { type: 'attachment', source: 'url', mode: part.mode, name, mediaType, bytes };
}

/** Read one part into memory, within `budget` bytes (the smaller of the part and the message limit left). */
async function loadPart(
  deps: MessageAttachmentsDeps,
  sessionKey: string,
  part: MessagePart,
  budget: number,
): Promise<LoadedPart> {
  switch (part.type) {
    case 'text':
      return part;
    case 'binary': {
      const bytes = binaryBytes(part.data);
      if (bytes.byteLength > budget) throw tooBig(`binary part "${part.name}"`, bytes.byteLength, budget);
      const name = safeFileName(part.name);
      return {
        type: 'attachment',
        source: 'binary',
        mode: part.mode,
        name,
        mediaType: part.mediaType,
        bytes,
      };
    }
    case 'file':
      return loadFile(deps, sessionKey, part, budget);
    case 'url':
      return loadUrl(deps, part, budget);
  }
}

/** Store loaded parts; on a failure, what was stored so far is removed again. */
async function storeLoaded(
  workspace: WorkspaceStore,
  sessionKey: string,
  loaded: readonly LoadedPart[],
): Promise<StoredParts> {
  const undos: (() => Promise<void>)[] = [];
  const undo = async (): Promise<void> => {
    for (const step of undos.splice(0).reverse()) await step();
  };
  const parts: StoredPart[] = [];
  try {
    for (const part of loaded) {
      if (part.type === 'text') {
        parts.push(part);
        continue;
      }
      const { bytes, ...reference } = part;
      const blob = await workspace.store(sessionKey, bytes, part.name);
      undos.push(blob.undo);
      parts.push({ ...reference, sha256: blob.sha256, size: blob.size, path: blob.path });
    }
  } catch (error) {
    await undo();
    throw error;
  }
  return { parts, undo };
}

/** Create the attachment side of admission for a runtime's configuration. */
export function createMessageAttachments(deps: MessageAttachmentsDeps): MessageAttachments {
  const candidates = inlineCandidates(deps);
  const { maxPartBytes, maxMessageBytes } = deps.limits;
  return {
    check(parts) {
      let total = 0;
      for (const part of parts ?? []) {
        if (part.type === 'binary') {
          const size = binaryBytes(part.data).byteLength;
          if (size > maxPartBytes) throw tooBig(`binary part "${part.name}"`, size, maxPartBytes);
          total += size;
          if (total > maxMessageBytes) throw tooBig('the message', total, maxMessageBytes);
        }
        if (part.type === 'text' || part.mode !== 'inline') continue;
        // A url part's type is known only once downloaded (checked then, still before anything is stored).
        const name =
          part.type === 'binary'
            ? part.name
            : (part.name ?? (part.type === 'url' ? describeUrl(part.url) : safeFileName(part.path)));
        const mediaType = part.type === 'file' ? (part.mediaType ?? mediaTypeOfName(name)) : part.mediaType;
        if (mediaType !== undefined) checkInline(candidates, mediaType, name);
      }
    },
    async store(sessionKey, parts) {
      const loaded: LoadedPart[] = [];
      let total = 0;
      for (const part of parts) {
        const budget = Math.min(maxPartBytes, maxMessageBytes - total);
        const one = await loadPart(deps, sessionKey, part, budget);
        if (one.type === 'attachment') {
          total += one.bytes.byteLength;
          if (one.mode === 'inline') checkInline(candidates, one.mediaType, one.name);
        }
        loaded.push(one);
      }
      return storeLoaded(deps.workspace, sessionKey, loaded);
    },
  };
}
