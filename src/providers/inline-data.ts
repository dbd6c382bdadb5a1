/** What every wire format needs of an inline attachment (images, audio, PDFs): its bytes, checked. */
import type { InlineAttachment } from '../core/index.js';
import { RuntimeError } from '../core/index.js';

/** The attachment's base64 bytes; the runner fills them in before every call, so a gap is a bug. */
export function inlineDataOf(attachment: InlineAttachment): string {
  if (attachment.data === undefined) {
    throw new RuntimeError(
      'internal',
      `inline attachment "${attachment.name}" reached the provider without its bytes`,
    );
  }
  return attachment.data;
}
