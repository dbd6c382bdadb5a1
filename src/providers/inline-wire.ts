/** Inline attachments (images, audio, PDFs) in the wire formats of OpenAI chat completions and Anthropic Messages. */
import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { ChatCompletionContentPart } from 'openai/resources/chat/completions';
import type { InlineAttachment } from '../core/attachments.js';
import { RuntimeError } from '../core/errors.js';

/** The attachment's base64 bytes; the runner fills them in before every call, so a gap is a bug. */
function dataOf(attachment: InlineAttachment): string {
  if (attachment.data === undefined) {
    throw new RuntimeError(
      'internal',
      `inline attachment "${attachment.name}" reached the provider without its bytes`,
    );
  }
  return attachment.data;
}

/** One attachment as an OpenAI content part: `image_url` (data URL), `input_audio` (wav/mp3) or `file` (PDF). */
export function openaiContentPart(attachment: InlineAttachment): ChatCompletionContentPart {
  const data = dataOf(attachment);
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

type AnthropicImageType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

/** One attachment as an Anthropic block: `image` or `document` with a base64 source (Anthropic takes no audio). */
export function anthropicContentBlock(attachment: InlineAttachment): ContentBlockParam {
  const data = dataOf(attachment);
  switch (attachment.kind) {
    case 'image':
      return {
        type: 'image',
        source: { type: 'base64', media_type: attachment.mediaType as AnthropicImageType, data },
      };
    case 'pdf':
      return {
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data },
        title: attachment.name,
      };
    case 'audio':
      // Admission refuses audio for Anthropic models (its capability table has none); a caller's override
      // that claims otherwise gets a clear error instead of a request the API rejects.
      throw new RuntimeError('unsupported_content', `Anthropic models take no audio ("${attachment.name}")`);
  }
}
