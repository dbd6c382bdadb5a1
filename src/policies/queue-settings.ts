import { z } from 'zod';
import { maxDurationMs } from '../core/index.js';
import { queueModes, type QueueMode } from '../core/index.js';

export { queueModes, type QueueMode } from '../core/index.js';

/** What the queue does with a newcomer when it already holds `cap` messages. */
export const dropPolicies = ['old', 'new', 'summarize'] as const;
/** `old` drops the oldest, `new` refuses the newcomer, `summarize` drops the oldest but keeps a summary. */
export type DropPolicy = (typeof dropPolicies)[number];

/** Fully resolved queue settings for one message. */
export interface QueueSettings {
  /** The queue mode, with the `queue` alias already normalised to `followup`. @default 'collect' */
  readonly mode: Exclude<QueueMode, 'queue'>;
  /** Quiet time after the last enqueued message before the queue drains. @default 1000 */
  readonly debounceMs: number;
  /** Longest wait after a run ended before the queue drains anyway. @default 5000 */
  readonly maxWaitMs: number;
  /** Most messages the queue holds. @default 20 */
  readonly cap: number;
  /** What happens when the queue is full. @default 'summarize' */
  readonly drop: DropPolicy;
}

/** The built-in queue settings, used for every field no layer sets. */
export const defaultQueueSettings: QueueSettings = {
  mode: 'collect',
  debounceMs: 1000,
  maxWaitMs: 5000,
  cap: 20,
  drop: 'summarize',
};

/** The largest queue cap: a queue and its dropped-message summaries are held in memory and in the snapshot. */
export const maxQueueCap = 10_000;

/** A partial override of the queue settings, as given per message, session, channel or runtime. */
export const queueSettingsSchema = z
  .object({
    mode: z.enum(queueModes),
    debounceMs: z.number().int().min(0).max(maxDurationMs),
    maxWaitMs: z.number().int().min(0).max(maxDurationMs),
    cap: z.number().int().min(1).max(maxQueueCap),
    drop: z.enum(dropPolicies),
  })
  .partial()
  .strict();

/** What callers may pass as one layer of queue settings. */
export type QueueSettingsInput = z.input<typeof queueSettingsSchema>;

/** The layers queue settings resolve from; each is already validated. */
export interface QueueSettingsLayers {
  readonly message?: QueueSettingsInput | undefined;
  readonly session?: QueueSettingsInput | undefined;
  readonly channel?: QueueSettingsInput | undefined;
  readonly runtime?: QueueSettingsInput | undefined;
}

/** Resolve settings field by field: message > session > channel > runtime > built-in default. */
export function resolveQueueSettings(layers: QueueSettingsLayers): QueueSettings {
  // Lowest precedence first, so each later layer overrides only the fields it sets.
  const ordered = [layers.runtime, layers.channel, layers.session, layers.message];
  let mode: QueueMode = defaultQueueSettings.mode;
  let { debounceMs, maxWaitMs, cap, drop } = defaultQueueSettings;
  for (const layer of ordered) {
    if (layer === undefined) continue;
    mode = layer.mode ?? mode;
    debounceMs = layer.debounceMs ?? debounceMs;
    maxWaitMs = layer.maxWaitMs ?? maxWaitMs;
    cap = layer.cap ?? cap;
    drop = layer.drop ?? drop;
  }
  return { mode: normalizeQueueMode(mode), debounceMs, maxWaitMs, cap, drop };
}

/** Map the `queue` alias to `followup`; every other mode is returned unchanged. */
export function normalizeQueueMode(mode: QueueMode): Exclude<QueueMode, 'queue'> {
  return mode === 'queue' ? 'followup' : mode;
}

/** The channel of a session: the explicit one if given, else the session key's part before the first ':'. */
export function channelOf(sessionKey: string, channel?: string): string | undefined {
  if (channel !== undefined) return channel;
  const colon = sessionKey.indexOf(':');
  return colon > 0 ? sessionKey.slice(0, colon) : undefined;
}
