import { z } from 'zod';
import { maxDurationMs, systemClock, type Clock } from '../core/clock.js';
import { RuntimeError } from '../core/errors.js';
import { randomIds, type IdGenerator, type Random } from '../core/ids.js';
import type { Ledger } from '../ledger/ledger.js';
import { queueSettingsSchema } from '../policies/queue-settings.js';
import { profileKinds } from '../policies/order-profiles.js';
import { summarizeOlderTurns, type Compactor } from '../runner/compaction.js';
import { thinkingLevels, type ModelProvider } from '../providers/model-provider.js';
import type { Tool } from '../tools/define-tool.js';
import { assertNoPrototypeKeys, isToolLike } from './option-keys.js';

const isFunction = (value: unknown): boolean => typeof value === 'function';
const hasMethods =
  (...names: string[]) =>
  (value: unknown) =>
    typeof value === 'object' &&
    value !== null &&
    names.every((name) => isFunction((value as Record<string, unknown>)[name]));

/** Every duration option: whole milliseconds up to a year (longer would overflow nothing, but means a typo). */
const durationMs = () => z.int().min(0).max(maxDurationMs);
const rateSchema = z.object({ limit: z.int().min(1), intervalMs: durationMs().min(1) }).strict();
const modelRefSchema = z.object({ provider: z.string().min(1), model: z.string().min(1) }).strict();

/** The options of `createRuntime`, validated once at construction. */
export const runtimeOptionsSchema = z
  .object({
    /**
     * A Ledger instance (the caller keeps owning it), or where the runtime opens its SQLite ledger: `path`
     * (':memory:' allowed), `synchronous` (FULL fsyncs each group commit; NORMAL only at checkpoints) and an
     * optional `retention` that prunes events older than `eventsMaxAgeMs` (turns and runs are kept).
     * @default { path: './agentlanes.db', synchronous: 'full' }
     */
    ledger: z
      .union([
        z.custom<Ledger>(
          hasMethods('appendEvents', 'readEvents', 'appendMessage', 'close'),
          'expected a Ledger',
        ),
        z
          .object({
            path: z.string().min(1).default('./agentlanes.db'),
            synchronous: z.enum(['full', 'normal']).default('full'),
            retention: z
              .object({ eventsMaxAgeMs: durationMs().min(1) })
              .strict()
              .optional(),
          })
          .strict(),
      ])
      .prefault({}),
    providers: z.record(
      z.string().min(1),
      z.custom<ModelProvider>(hasMethods('stream'), 'expected a ModelProvider'),
    ),
    model: modelRefSchema
      .extend({
        fallbacks: z.array(modelRefSchema).default([]),
        thinking: z.enum(thinkingLevels).optional(),
      })
      .strict(),
    globalLane: z
      .object({
        concurrency: z.int().min(1).default(8),
        rate: rateSchema.optional(),
        perProvider: z
          .record(
            z.string(),
            z.object({ concurrency: z.int().min(1).optional(), rate: rateSchema.optional() }).strict(),
          )
          .optional(),
        warnAfterMs: z.number().min(0).max(maxDurationMs).default(2000),
      })
      .strict()
      .prefault({}),
    queue: queueSettingsSchema
      .extend({ byChannel: z.record(z.string(), queueSettingsSchema).default({}) })
      .strict()
      .prefault({}),
    tools: z.array(z.custom<Tool>(isToolLike, 'expected a tool from defineTool')).default([]),
    limits: z
      .object({
        maxToolTurns: z.int().min(1).default(25),
        runTimeoutMs: durationMs().min(1).default(600_000),
        parallelToolCalls: z.int().min(1).default(4),
        toolCorrectionBudget: z.int().min(0).default(3),
        /** How long an interrupting message waits for the old run to end before it queues normally. */
        interruptWaitMs: durationMs().default(15_000),
        /** Earlier turns of the session sent with each run. */
        historyTurns: z.int().min(0).default(50),
        /**
         * How long a paused run waits for decisions and results; then it continues, and what is still missing
         * goes back to the model as an error result. @default 86_400_000 (24 h)
         */
        pauseTimeoutMs: durationMs().min(1).default(86_400_000),
      })
      .strict()
      .prefault({}),
    sessions: z
      .object({ hibernateAfterMs: durationMs().min(1).default(300_000) })
      .strict()
      .prefault({}),
    blocks: z
      .object({ minChars: z.int().min(1).default(800), maxChars: z.int().min(1).default(1200) })
      .strict()
      .refine(
        (blocks) => blocks.minChars <= blocks.maxChars,
        'blocks.minChars must not exceed blocks.maxChars',
      )
      .prefault({}),
    /**
     * Tool policy layers, applied in order, each filtering what the previous one left: deny wins, an empty allow
     * allows all, `*` / `prefix_*` globs and `group:name` entries (from `toolGroups`); nothing is granted back.
     */
    toolPolicy: z
      .array(
        z.object({ allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional() }).strict(),
      )
      .default([]),
    /** Named groups of tool names or globs, used as `group:name` in `toolPolicy`. */
    toolGroups: z.record(z.string(), z.array(z.string())).default({}),
    /**
     * Approval rules: `risk: 'high'` tools always pause for an operator; `alwaysApprove` (names or globs) marks
     * more. @default { alwaysApprove: [] }
     */
    approvals: z
      .object({ alwaysApprove: z.array(z.string().min(1)).default([]) })
      .strict()
      .prefault({}),
    /** Credentials per provider, rotated on failure with cooldowns (BEHAVIOUR.md, "Auth profiles and failover"). */
    authProfiles: z
      .array(
        z
          .object({
            id: z.string().min(1),
            provider: z.string().min(1),
            type: z.enum(profileKinds),
            secret: z.union([
              z.string().min(1),
              z.object({ env: z.string().min(1) }).strict(),
              z.object({ value: z.string().min(1) }).strict(),
            ]),
          })
          .strict(),
      )
      .default([]),
    /** An explicit profile order per provider (ids); profiles it omits follow in the default order. */
    authOrder: z.record(z.string(), z.array(z.string().min(1))).default({}),
    failover: z
      .object({
        /** Scope rate-limit cooldowns to the model that failed. @default false */
        perModelCooldown: z.boolean().default(false),
        /** Attempts per model call. @default clamp(24 + 8 × profiles, 32, 160) */
        maxAttempts: z.int().min(1).optional(),
        /**
         * When every profile of every model is cooling, how long a run waits for the soonest one to come back
         * before it fails with `provider_rate_limit` (docs/failover.md). @default 60_000
         */
        maxWaitMs: durationMs().default(60_000),
      })
      .strict()
      .prefault({}),
    /** Prices per million tokens, keyed 'provider/model'; a model without a price costs 0 (and says so). */
    prices: z
      .record(z.string(), z.object({ input: z.number().min(0), output: z.number().min(0) }).strict())
      .default({}),
    /** Shrinks a conversation that overflows the model's context. @default the model summarises older turns */
    compactor: z
      .custom<Compactor>(isFunction, 'expected a compactor function')
      .default(() => summarizeOlderTurns),
    systemPrompt: z.string().optional(),
    clock: z
      .custom<Clock>(hasMethods('now', 'setTimeout', 'clearTimeout', 'sleep'), 'expected a Clock')
      .default(systemClock),
    random: z.custom<Random>(isFunction, 'expected a function returning [0, 1)').default(() => Math.random),
    ids: z
      .custom<IdGenerator>(isFunction, 'expected an id generator (prefix) => string')
      .default(() => randomIds),
    /** Where runtime-internal failures (a ledger write that failed in the background) are reported. */
    onError: z.custom<(error: unknown) => void>(isFunction).optional(),
  })
  .strict()
  .superRefine((options, context) => {
    const ids = new Set<string>();
    for (const profile of options.authProfiles) {
      if (ids.has(profile.id)) {
        context.addIssue({
          code: 'custom',
          path: ['authProfiles'],
          message: `auth profile id "${profile.id}" is used twice`,
        });
      }
      ids.add(profile.id);
      if (!Object.hasOwn(options.providers, profile.provider)) {
        context.addIssue({
          code: 'custom',
          path: ['authProfiles'],
          message: `auth profile "${profile.id}" names provider "${profile.provider}", which is not in providers`,
        });
      }
    }
    for (const ref of [options.model, ...options.model.fallbacks]) {
      if (!Object.hasOwn(options.providers, ref.provider)) {
        context.addIssue({
          code: 'custom',
          path: ['model'],
          message: `model provider "${ref.provider}" is not in providers (${Object.keys(options.providers).join(', ') || 'none'})`,
        });
      }
    }
  });

/** What callers pass to `createRuntime`. */
export type RuntimeOptions = z.input<typeof runtimeOptionsSchema>;
/** The validated runtime configuration. */
export type RuntimeConfig = z.output<typeof runtimeOptionsSchema>;

/** Validate options; bad configuration throws `invalid_input` naming every bad field. */
export function parseRuntimeOptions(options: RuntimeOptions): RuntimeConfig {
  assertNoPrototypeKeys(options);
  const parsed = runtimeOptionsSchema.safeParse(options);
  if (parsed.success) return parsed.data;
  throw new RuntimeError('invalid_input', `createRuntime: ${z.prettifyError(parsed.error)}`, {
    cause: parsed.error,
  });
}
