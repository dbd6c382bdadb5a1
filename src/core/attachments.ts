/**
 * Content parts of an inbound message as the runtime keeps them: references to bytes stored in the workspace,
 * never the bytes themselves (docs/attachments.md).
 */

/** How a part reaches the model: `file` stores it in the session's workspace and names its path in the prompt,
 * `inline` passes it into the model's context. */
export const partModes = ['file', 'inline'] as const;
/** A part's delivery mode. */
export type PartMode = (typeof partModes)[number];

/** Where an attachment's bytes came from. */
export const partSources = ['url', 'file', 'binary'] as const;
/** An attachment's source. */
export type PartSource = (typeof partSources)[number];

/** What a model may take inline: images, audio, and PDF documents. */
export const inlineKinds = ['image', 'audio', 'pdf'] as const;
/** A kind of inline content. */
export type InlineKind = (typeof inlineKinds)[number];

/** An attachment stored in the workspace: content-addressed by `sha256`, linked into the session's directory. */
export interface AttachmentRef {
  readonly type: 'attachment';
  readonly source: PartSource;
  readonly mode: PartMode;
  /** The file name shown to the model (sanitised). */
  readonly name: string;
  readonly mediaType: string;
  /** Size in bytes. */
  readonly size: number;
  /** Hex SHA-256 of the bytes: the blob's name under `<workspace root>/.blobs/`. */
  readonly sha256: string;
  /** The absolute path of the session's copy, inside the workspace root. */
  readonly path: string;
}

/** A part of a stored message: text passed through, or an attachment reference. */
export type StoredPart = { readonly type: 'text'; readonly text: string } | AttachmentRef;

/**
 * An attachment in the model's context (inline mode). The transcript keeps it without `data`; the runner reads the
 * blob and fills `data` (base64) right before each model call.
 */
export interface InlineAttachment {
  readonly kind: InlineKind;
  readonly mediaType: string;
  readonly name: string;
  readonly sha256: string;
  /** The bytes, base64-encoded; present only in a request about to be sent. */
  readonly data?: string;
}
