import type { Attachment, Message } from 'chat';

/** A binary content part as `send()` takes it. */
export interface ChatBinaryPart {
  readonly type: 'binary';
  readonly data: Uint8Array<ArrayBuffer>;
  readonly mediaType: string;
  readonly name: string;
  readonly mode: 'file' | 'inline';
}

/** What mapping a message's attachments gives: the parts, and the names of those that could not be fetched. */
export interface MappedAttachments {
  readonly parts: ChatBinaryPart[];
  readonly missing: string[];
}

/** The attachment's bytes: given, or fetched by the platform adapter (which handles the platform's auth). */
async function bytesOf(attachment: Attachment): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const data = attachment.data ?? (await attachment.fetchData?.());
  if (data === undefined) return undefined;
  if (data instanceof Blob) return new Uint8Array(await data.arrayBuffer());
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer);
}

/**
 * A message's attachments (photos, files, voice notes, videos) as binary parts, fetched through the platform
 * adapter. Never its URL: a platform's file URL may carry the bot's credentials (Telegram's does). An attachment
 * that cannot be fetched is reported and named in `missing`, so the agent hears of it instead of losing it.
 */
export async function partsOfMessage(
  message: Pick<Message, 'attachments'>,
  mode: 'file' | 'inline',
  onError: (error: unknown) => void,
): Promise<MappedAttachments> {
  const parts: ChatBinaryPart[] = [];
  const missing: string[] = [];
  for (const [index, attachment] of message.attachments.entries()) {
    const name = attachment.name ?? `${attachment.type}-${index + 1}`;
    try {
      const data = await bytesOf(attachment);
      if (data === undefined) throw new Error(`the platform gave no way to fetch ${name}`);
      const mediaType = attachment.mimeType ?? 'application/octet-stream';
      parts.push({ type: 'binary', data, mediaType, name, mode });
    } catch (error) {
      onError(error);
      missing.push(name);
    }
  }
  return { parts, missing };
}
