import { z } from 'zod';
import { RuntimeError } from '../core/errors.js';
import { queueSettingsSchema, type QueueSettingsInput } from '../policies/queue-settings.js';

/** An inbound chat message as a bot hands it over. */
export const inboundMessageSchema = z
  .object({
    /** The platform's message id; redelivery of an id within 5 minutes is answered `duplicate`. */
    id: z.string().min(1).max(256).optional(),
    text: z.string().min(1).max(200_000),
    sender: z
      .object({ id: z.string().min(1).max(256), name: z.string().max(256).optional() })
      .strict()
      .optional(),
    /** The channel (platform) it came from; defaults to the part of the session key before ':'. */
    channel: z.string().min(1).max(128).optional(),
    /** A thread within the chat; messages of different threads are never merged into one run. */
    thread: z.string().min(1).max(256).optional(),
  })
  .strict();

/** What `send()` takes: the message's text, or the message. */
export type InboundMessageInput = string | z.input<typeof inboundMessageSchema>;
/** A validated inbound message. */
export type InboundMessage = z.output<typeof inboundMessageSchema>;

const sessionKeySchema = z.string().min(1).max(512);

function invalid(what: string, error: z.ZodError): RuntimeError {
  return new RuntimeError('invalid_input', `${what}: ${z.prettifyError(error)}`, { cause: error });
}

/** Validate a session key; bad keys throw `invalid_input`. */
export function parseSessionKey(key: unknown): string {
  const parsed = sessionKeySchema.safeParse(key);
  if (!parsed.success) throw invalid('session key', parsed.error);
  return parsed.data;
}

/** Validate an inbound message; a plain string is a message with only text. */
export function parseInboundMessage(input: unknown): InboundMessage {
  const parsed = inboundMessageSchema.safeParse(typeof input === 'string' ? { text: input } : input);
  if (!parsed.success) throw invalid('send: message', parsed.error);
  return parsed.data;
}

/** Validate per-message queue settings. */
export function parseQueueSettings(what: string, input: unknown): QueueSettingsInput {
  const parsed = queueSettingsSchema.safeParse(input ?? {});
  if (!parsed.success) throw invalid(what, parsed.error);
  return parsed.data;
}
