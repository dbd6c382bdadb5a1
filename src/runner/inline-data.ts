import type { InlineAttachment } from '../core/index.js';
import { isRuntimeError } from '../core/index.js';
import type { ModelMessage } from '../providers/index.js';
import type { WorkspaceStore } from '../tools/index.js';

/** Each run's bytes already read, by SHA-256 (keyed by the run's signal, so they go when the run does). */
const readByRun = new WeakMap<AbortSignal, Map<string, string | null>>();

type UserMessage = Extract<ModelMessage, { role: 'user' }>;

/** The base64 bytes of a blob, or null when it is no longer in the workspace. */
async function dataOf(workspace: WorkspaceStore, sha256: string, read: Map<string, string | null>) {
  const known = read.get(sha256);
  if (known !== undefined) return known;
  let data: string | null;
  try {
    data = Buffer.from(await workspace.read(sha256)).toString('base64');
  } catch (error) {
    if (!isRuntimeError(error, 'not_found')) throw error;
    data = null;
  }
  read.set(sha256, data);
  return data;
}

/** The message with its attachments' bytes; one whose blob was removed is named as gone instead of sent. */
async function withData(
  workspace: WorkspaceStore,
  message: UserMessage & { readonly attachments: readonly InlineAttachment[] },
  read: Map<string, string | null>,
): Promise<UserMessage> {
  const attachments: InlineAttachment[] = [];
  const gone: string[] = [];
  for (const attachment of message.attachments) {
    const data = await dataOf(workspace, attachment.sha256, read);
    if (data === null) gone.push(`[Attachment "${attachment.name}" is no longer available]`);
    else attachments.push({ ...attachment, data });
  }
  const content = [message.content, ...gone].filter((text) => text.length > 0).join('\n\n');
  return attachments.length === 0 ? { role: 'user', content } : { role: 'user', content, attachments };
}

/** True when a user message of `messages` has inline attachments (whose bytes `withInlineData` reads). */
function hasInlineData(messages: readonly ModelMessage[]): boolean {
  return messages.some((message) => message.role === 'user' && message.attachments !== undefined);
}

/**
 * The messages of one model call with every inline attachment's bytes (base64) read from the workspace: the
 * conversation, the transcript and the ledger only ever hold references. Messages without attachments are
 * passed as they are; an attachment whose blob was removed since is named as gone, so the session goes on.
 */
export async function withInlineData(
  workspace: WorkspaceStore,
  signal: AbortSignal,
  messages: readonly ModelMessage[],
): Promise<readonly ModelMessage[]> {
  if (!hasInlineData(messages)) return messages;
  let read = readByRun.get(signal);
  if (read === undefined) readByRun.set(signal, (read = new Map<string, string | null>()));
  const cache = read;
  return Promise.all(
    messages.map((message) =>
      message.role === 'user' && message.attachments !== undefined
        ? withData(workspace, { ...message, attachments: message.attachments }, cache)
        : Promise.resolve(message),
    ),
  );
}
