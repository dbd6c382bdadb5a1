export { stopRefusedNotice } from '../delivery/stop-command.js';
export {
  connectChat,
  chatSessionKey,
  type ChatSdkAdapterOptions,
  type ChatSdkConnection,
} from './chat-sdk-adapter.js';
export type { ReplyFormat } from './chat-target.js';
export { roleOfAuthor, type ChatPlace, type ChatRoleOptions } from './chat-roles.js';
export {
  startReplyDelivery,
  type ReplyDelivery,
  type ReplyDeliveryOptions,
} from '../delivery/reply-delivery.js';
export {
  defaultFailureNotice,
  defaultInterruptedNotice,
  type ReplyTarget,
  type SentLookup,
  type TargetResolver,
} from '../delivery/reply-target.js';
export { redeliveryWindowMs } from '../delivery/inbound-dedupe.js';
