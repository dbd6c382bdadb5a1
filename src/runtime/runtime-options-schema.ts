import { z } from 'zod';
import { isPlanStepMode, type PlanStepMode } from '../cluster/index.js';
import { maxDurationMs, systemClock, type Clock } from '../core/index.js';
import { randomIds, type IdGenerator, type Random } from '../core/index.js';
import type { Ledger } from '../ledger/index.js';
import { queueSettingsSchema } from '../policies/index.js';
import { profileKinds } from '../policies/index.js';
import { summarizeOlderTurns, type Compactor } from '../runner/index.js';
import { thinkingLevels, type ModelProvider } from '../providers/index.js';
import { isToolSource, type ToolEntry } from '../tools/index.js';
import { attachmentsOptionsSchema, workspaceOptionsSchema } from '../actors/index.js';
import { authorityOptionsSchema } from '../actors/index.js';
import { isToolLike } from './option-keys.js';
import type { RuntimeOptions } from './runtime-options.js';

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

const optionsObjectSchema = z
  .object({
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
        z
          .object({
            postgres: z
              .object({
                connectionString: z.string().min(1),
                schema: z
                  .string()
                  .regex(/^[a-z_][a-z0-9_]{0,62}$/u, 'a lowercase identifier')
                  .default('agentlanes'),
              })
              .strict(),
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
    tools: z
      .array(
        z.custom<ToolEntry>(
          (value) => isToolLike(value) || isToolSource(value),
          'expected a tool from defineTool or a tool source',
        ),
      )
      .default([]),
    limits: z
      .object({
        maxToolTurns: z.int().min(1).default(25),
        runTimeoutMs: durationMs().min(1).default(600_000),
        parallelToolCalls: z.int().min(1).default(4),
        toolCorrectionBudget: z.int().min(0).default(3),
        interruptWaitMs: durationMs().default(15_000),
        historyTurns: z.int().min(0).default(50),
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
    toolPolicy: z
      .array(
        z.object({ allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional() }).strict(),
      )
      .default([]),
    toolGroups: z.record(z.string(), z.array(z.string())).default({}),
    subagents: z
      .object({
        enabled: z.boolean().default(false),
        concurrency: z.int().min(1).default(8),
        toolPolicy: z
          .object({ allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional() })
          .strict()
          .optional(),
        maxDepth: z.int().min(1).max(8).default(1),
      })
      .strict()
      .prefault({}),
    recovery: z
      .object({
        crashedRuns: z.enum(['resume', 'close']).default('resume'),
        maxResumes: z.int().min(0).max(100).default(2),
        maxAgeMs: durationMs().default(86_400_000),
      })
      .strict()
      .prefault({}),
    authority: authorityOptionsSchema.optional(),
    approvals: z
      .object({ alwaysApprove: z.array(z.string().min(1)).default([]) })
      .strict()
      .prefault({}),
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
    authOrder: z.record(z.string(), z.array(z.string().min(1))).default({}),
    failover: z
      .object({
        perModelCooldown: z.boolean().default(false),
        maxAttempts: z.int().min(1).optional(),
        maxWaitMs: durationMs().default(60_000),
      })
      .strict()
      .prefault({}),
    prices: z
      .record(z.string(), z.object({ input: z.number().min(0), output: z.number().min(0) }).strict())
      .default({}),
    compactor: z
      .custom<Compactor>(isFunction, 'expected a compactor function')
      .default(() => summarizeOlderTurns),
    systemPrompt: z.string().optional(),
    workspace: workspaceOptionsSchema,
    attachments: attachmentsOptionsSchema,
    clock: z
      .custom<Clock>(hasMethods('now', 'setTimeout', 'clearTimeout', 'sleep'), 'expected a Clock')
      .default(systemClock),
    random: z.custom<Random>(isFunction, 'expected a function returning [0, 1)').default(() => Math.random),
    ids: z
      .custom<IdGenerator>(isFunction, 'expected an id generator (prefix) => string')
      .default(() => randomIds),
    onError: z.custom<(error: unknown) => void>(isFunction).optional(),
    cluster: z
      .union([
        z.literal(false),
        z
          .object({
            leaseMs: z.int().min(500).max(600_000).optional(),
            renewMs: z.int().min(50).max(600_000).optional(),
            pollMs: z.int().min(10).max(60_000).optional(),
            scanMs: z.int().min(50).max(600_000).optional(),
            // Not z.enum: its failure would hide inside the union's generic "Invalid input".
            planSteps: z
              .custom<PlanStepMode>()
              .refine(isPlanStepMode, 'expected "jobs" or "inline"')
              .optional(),
            jobConcurrency: z.int().min(1).max(256).optional(),
          })
          .strict(),
      ])
      .default({}),
  })
  .strict()
  .strict();

type CheckedOptions = z.output<typeof optionsObjectSchema>;

/** Every auth profile id once, and every provider a profile or model names configured. */
function checkReferences(options: CheckedOptions, context: z.RefinementCtx<CheckedOptions>): void {
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
}

/** The options of `createRuntime`, validated once at construction; it accepts exactly `RuntimeOptions`. */
export const runtimeOptionsSchema = optionsObjectSchema.superRefine(checkReferences);

type SchemaInput = z.input<typeof runtimeOptionsSchema>;
/** Compiles only when `From` is assignable to `To` (the error then names the field that differs). */
type Assignable<From extends To, To> = From;
/** True only when the two types are identical (this catches an option the other side does not have). */
type Identical<Left, Right> =
  (<T>() => T extends Left ? 1 : 2) extends <T>() => T extends Right ? 1 : 2 ? true : false;
/** Compiles only for `true`. */
type Holds<Condition extends true> = Condition;
/**
 * Compile-time proof that the hand-written interface and the schema agree both ways: every option the interface
 * documents is one the schema takes, and the schema takes nothing the interface leaves out.
 * @internal
 */
export type RuntimeOptionsMatchSchema = [
  Assignable<RuntimeOptions, SchemaInput>,
  Assignable<SchemaInput, RuntimeOptions>,
  Holds<Identical<RuntimeOptions, SchemaInput>>,
];
