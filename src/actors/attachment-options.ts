import { z } from 'zod';
import { maxDurationMs } from '../core/index.js';
import { inlineKinds, type InlineKind } from '../core/index.js';

/** Where content parts are stored (docs/attachments.md). */
export interface WorkspaceOptions {
  /**
   * The workspace root: each session's attachments go to `<root>/<session key>/`, their bytes once to
   * `<root>/.blobs/<sha256>`; a `file` part names a file of its own session's directory. Created on first use.
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
   * Where `url` parts may be fetched from (docs/attachments.md, "Fetch policy"): by default only public addresses;
   * loopback, private, link-local (the cloud metadata service), carrier-grade NAT, unique-local, multicast and
   * reserved addresses, and names that resolve to one, are refused.
   * @default { allowHosts: [], allowPrivateNetworks: false }
   */
  fetch?: AttachmentFetchOptions | undefined;
  /**
   * What models take inline, keyed 'provider/model' (`*` matches any run of characters in the model), checked
   * before the provider's own table: `{ 'openai/my-vision-*': ['image'] }`. @default {} (the providers' tables)
   */
  inline?: Record<string, InlineKind[]> | undefined;
}

/** Exceptions to the fetch policy of `url` parts: what may be fetched besides public addresses. */
export interface AttachmentFetchOptions {
  /**
   * Hosts fetched whatever address they resolve to, as a URL names them: a host name (`files.internal`), a
   * `*.` pattern for every name below a domain (`*.corp.example`), or an IP literal (`127.0.0.1`, `::1`). Each
   * redirect hop is judged by the host it names. @default []
   */
  allowHosts?: string[] | undefined;
  /**
   * Also fetch from private networks: RFC 1918 (10/8, 172.16/12, 192.168/16), carrier-grade NAT (100.64/10)
   * and unique-local IPv6 (fc00::/7). Loopback, link-local (169.254.169.254), multicast, unspecified and reserved
   * addresses stay refused unless `allowHosts` names the host. @default false
   */
  allowPrivateNetworks?: boolean | undefined;
}

/** One `allowHosts` entry: a host name, a `*.` pattern, or an IPv4 or IPv6 literal (brackets optional). */
const allowedHostSchema = z
  .string()
  .min(1)
  .max(253)
  .regex(
    /^((\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?|\[?[0-9a-f:.]*:[0-9a-f:.]*\]?)$/i,
    'expected a host name, "*.domain" or an IP address',
  );

/** The schema of `attachments.fetch`. */
export const attachmentFetchOptionsSchema = z
  .object({
    allowHosts: z.array(allowedHostSchema).max(1000).default([]),
    allowPrivateNetworks: z.boolean().default(false),
  })
  .strict()
  .prefault({});

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
    fetch: attachmentFetchOptionsSchema,
    inline: z
      .record(z.string().regex(/^[^/]+\/.+$/, "expected 'provider/model'"), z.array(z.enum(inlineKinds)))
      .default({}),
  })
  .strict()
  .prefault({});

/** The validated `attachments` options. */
export type AttachmentsConfig = z.output<typeof attachmentsOptionsSchema>;
