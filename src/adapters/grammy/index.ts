export { stopRefusedNotice } from '../delivery/stop-command.js';
export { connectGrammy, type GrammyAdapterOptions, type GrammyConnection } from './grammy-adapter.js';
export {
  createTelegramRoles,
  type TelegramChat,
  type TelegramRoleOptions,
  type TelegramRoles,
  type TelegramUser,
} from './telegram-roles.js';
export { telegramSessionKey, telegramPlaceOf, type TelegramPlace } from './telegram-keys.js';
export { chunkForTelegram, telegramChunk } from './telegram-target.js';
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
