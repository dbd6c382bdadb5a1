import type { Api } from 'grammy';
import type { Message } from 'grammy/types';

/** A file a Telegram message carries (the largest size of a photo). */
export interface TelegramAttachment {
  readonly fileId: string;
  readonly name: string;
  readonly mediaType: string;
}

/** A binary content part as `send()` takes it. */
export interface BinaryPart {
  readonly type: 'binary';
  readonly data: Uint8Array<ArrayBuffer>;
  readonly mediaType: string;
  readonly name: string;
  readonly mode: 'file' | 'inline';
}

/** The file of a photo, document, voice note or audio message; undefined for a message without one. */
export function attachmentOf(message: Message): TelegramAttachment | undefined {
  const photo = message.photo?.at(-1);
  if (photo !== undefined) {
    return { fileId: photo.file_id, name: `photo-${photo.file_unique_id}.jpg`, mediaType: 'image/jpeg' };
  }
  const { document, voice, audio } = message;
  if (document !== undefined) {
    const name = document.file_name ?? `document-${document.file_unique_id}`;
    return { fileId: document.file_id, name, mediaType: document.mime_type ?? 'application/octet-stream' };
  }
  if (voice !== undefined) {
    const name = `voice-${voice.file_unique_id}.ogg`;
    return { fileId: voice.file_id, name, mediaType: voice.mime_type ?? 'audio/ogg' };
  }
  if (audio !== undefined) {
    const name = audio.file_name ?? `audio-${audio.file_unique_id}.mp3`;
    return { fileId: audio.file_id, name, mediaType: audio.mime_type ?? 'audio/mpeg' };
  }
  return undefined;
}

/**
 * Download an attachment through the Bot API (`getFile`, then the file URL) into a binary part: the URL holds the
 * bot token, so the bytes are passed, never the URL.
 */
export async function downloadAttachment(
  api: Api,
  files: { readonly apiRoot: string; readonly token: string; readonly mode: 'file' | 'inline' },
  attachment: TelegramAttachment,
): Promise<BinaryPart> {
  const file = await api.getFile(attachment.fileId);
  if (file.file_path === undefined) throw new Error('Telegram gave no path for the file');
  const response = await fetch(`${files.apiRoot}/file/bot${files.token}/${file.file_path}`);
  if (!response.ok) throw new Error(`file download failed with HTTP ${response.status}`);
  const data = new Uint8Array(await response.arrayBuffer());
  return { type: 'binary', data, mediaType: attachment.mediaType, name: attachment.name, mode: files.mode };
}
