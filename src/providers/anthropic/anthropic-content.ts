/** Inline attachments (images, PDFs) in the wire format of Anthropic Messages. */
import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { InlineAttachment } from '../../core/index.js';
import { RuntimeError } from '../../core/index.js';
import { inlineDataOf } from '../inline-data.js';

type AnthropicImageType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

/** One attachment as an Anthropic block: `image` or `document` with a base64 source (Anthropic takes no audio). */
export function anthropicContentBlock(attachment: InlineAttachment): ContentBlockParam {
  const data = inlineDataOf(attachment);
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
