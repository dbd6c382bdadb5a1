/** Inline attachments (images, audio, PDFs) in the wire format of OpenAI chat completions. */
import type { ChatCompletionContentPart } from 'openai/resources/chat/completions';
import type { InlineAttachment } from '../../core/index.js';
import { inlineDataOf } from '../inline-data.js';

/** One attachment as an OpenAI content part: `image_url` (data URL), `input_audio` (wav/mp3) or `file` (PDF). */
export function openaiContentPart(attachment: InlineAttachment): ChatCompletionContentPart {
  const data = inlineDataOf(attachment);
  switch (attachment.kind) {
    case 'image':
      return { type: 'image_url', image_url: { url: `data:${attachment.mediaType};base64,${data}` } };
    case 'audio': {
      const format =
        attachment.mediaType === 'audio/mpeg' || attachment.mediaType === 'audio/mp3' ? 'mp3' : 'wav';
      return { type: 'input_audio', input_audio: { data, format } };
    }
    case 'pdf':
      return {
        type: 'file',
        file: { filename: attachment.name, file_data: `data:${attachment.mediaType};base64,${data}` },
      };
  }
}

/** A user message's content for OpenAI: the text alone, or the text part followed by the attachments. */
export function openaiUserContent(
  content: string,
  attachments: readonly InlineAttachment[] | undefined,
): string | ChatCompletionContentPart[] {
  if (attachments === undefined || attachments.length === 0) return content;
  const text: ChatCompletionContentPart[] = content.length > 0 ? [{ type: 'text', text: content }] : [];
  return [...text, ...attachments.map(openaiContentPart)];
}
