/**
 * `agentlanes/attachments`: what a message carries besides text (docs/attachments.md). The parts a sender passes,
 * how they are stored, which inline kinds a model takes (`openaiInlineCapabilities`, …, for a provider's
 * `inlineCapabilities`), and the `attachments` and `workspace` options.
 */
export {
  partModes,
  partSources,
  inlineKinds,
  type PartMode,
  type PartSource,
  type InlineKind,
  type AttachmentRef,
  type StoredPart,
  type InlineAttachment,
} from '../core/index.js';
export {
  openaiInlineCapabilities,
  anthropicInlineCapabilities,
  inlineKindOf,
  type InlineCapability,
} from '../policies/index.js';
export {
  messagePartSchema,
  type MessagePartInput,
  type AttachmentsOptions,
  type WorkspaceOptions,
} from '../actors/index.js';
