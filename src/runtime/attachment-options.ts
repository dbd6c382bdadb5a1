import { z } from 'zod';
import { maxDurationMs } from '../core/clock.js';
import { inlineKinds, type InlineKind } from '../core/attachments.js';

/** Where content parts are stored (docs/attachments.md). */
export interface WorkspaceOptions {
  /**
   * The workspace root: each session's attachments go to `<root>/<session key>/`, their bytes once to
   * `<root>/.blobs/<sha256>`; `file` parts must name paths inside it. Created on first use.
   * @default './agentlanes-workspace'
   */
  root?: string | undefined;
}

/** Limits on content parts, and what models take inline (docs/attachments.md). */
export interface AttachmentsOptions {
  /** Most bytes one part may have; a bigger one fails the send with `invalid_input`. @default 20_971_520 (20 MiB) */
  maxPartBytes?: number | undefined;
  /** Most bytes the parts of one message may have together. @default 52_428_800 (50 MiB) */
  maxMessageBytes?: number | undefined;
  /** How long a `url` part's download may take, on the runtime's clock, in ms. @default 30_000 */
  downloadTimeoutMs?: number | undefined;
  /**
   * Content types a downloaded `url` part may have (`type/*` covers a type).
   * @default ['image/*', 'audio/*', 'application/pdf', 'text/*', 'application/json']
   */
  downloadMediaTypes?: string[] | undefined;
  /**
   * What models take inline, keyed 'provider/model' (`*` matches any run of characters in the model), checked
   * before the provider's own table: `{ 'openai/my-vision-*': ['image'] }`. @default {} (the providers' tables)
   */
  inline?: Record<string, InlineKind[]> | undefined;
}

/** The default content types a `url` part may have. */
export const defaultDownloadMediaTypes = [
  'image/*',
  'audio/*',
  'application/pdf',
  'text/*',
  'application/json',
];

/** The schema of `workspace`. */
export const workspaceOptionsSchema = z
  .object({ root: z.string().min(1).default('./agentlanes-workspace') })
  .strict()
  .prefault({});

const mebibyte = 1024 * 1024;

/** The schema of `attachments`. */
export const attachmentsOptionsSchema = z
  .object({
    maxPartBytes: z
      .int()
      .min(1)
      .default(20 * mebibyte),
    maxMessageBytes: z
      .int()
      .min(1)
      .default(50 * mebibyte),
    downloadTimeoutMs: z.int().min(1).max(maxDurationMs).default(30_000),
    downloadMediaTypes: z
      .array(
        z.string().regex(/^(\*\/\*|[a-z0-9.+-]+\/(\*|[a-z0-9.+-]+))$/, 'expected "type/subtype" or "type/*"'),
      )
      .default(defaultDownloadMediaTypes),
    inline: z
      .record(z.string().regex(/^[^/]+\/.+$/, "expected 'provider/model'"), z.array(z.enum(inlineKinds)))
      .default({}),
  })
  .strict()
  .prefault({});

/** The validated `attachments` options. */
export type AttachmentsConfig = z.output<typeof attachmentsOptionsSchema>;
