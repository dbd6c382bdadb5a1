import type { AttachmentRef, InlineAttachment, StoredPart } from '../core/index.js';
import { inlineKindOf } from './inline-capabilities.js';

/** The line that tells the model where a file-mode attachment was saved (or that an inline one is attached). */
export function describeAttachment(part: AttachmentRef): string {
  if (part.mode === 'inline') return `[Attachment "${part.name}" (${part.mediaType}) is included inline]`;
  return `[Attachment "${part.name}" (${part.mediaType}, ${part.size} bytes) saved at ${part.path}]`;
}

/**
 * A message's text as the model reads it: the text, then each part in order (text parts passed through, each
 * attachment as the line naming its workspace path, or saying it is included inline).
 */
export function composeMessageText(text: string, parts: readonly StoredPart[] | undefined): string {
  const sections = text.length > 0 ? [text] : [];
  for (const part of parts ?? []) sections.push(part.type === 'text' ? part.text : describeAttachment(part));
  return sections.join('\n\n');
}

/** The inline attachments among `parts`, in order, as the model's context carries them (without their bytes). */
export function inlineAttachmentsOf(parts: readonly StoredPart[] | undefined): InlineAttachment[] {
  const attachments: InlineAttachment[] = [];
  for (const part of parts ?? []) {
    if (part.type !== 'attachment' || part.mode !== 'inline') continue;
    const kind = inlineKindOf(part.mediaType);
    // Admission refused every inline part without a kind; a stored one without is skipped, never guessed.
    if (kind === undefined) continue;
    attachments.push({ kind, mediaType: part.mediaType, name: part.name, sha256: part.sha256 });
  }
  return attachments;
}
