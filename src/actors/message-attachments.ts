import { type AttachmentRef, type StoredPart, type Clock, RuntimeError } from '../core/index.js';
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
import { mediaTypeOfName, type MessagePart } from './inbound-message.js';

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
