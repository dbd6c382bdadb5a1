import { z } from 'zod';
import { partModes } from '../core/index.js';
import { storableString } from '../core/index.js';

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
