import { z } from 'zod';
import { builtInRoles, controlActions, roleNamePattern, type ControlAction } from '../core/index.js';
import { defaultControlRules, type Authority, type ControlRule } from '../policies/index.js';

const roleName = () => z.string().regex(roleNamePattern, 'a role is a letter, then letters, digits, _ or -');
const layerSchema = z
  .object({ allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional() })
  .strict();
const ruleSchema = z
  .object({
    any: roleName().nullable().optional(),
    own: roleName().nullable().optional(),
    requester: z.boolean().optional(),
  })
  .strict();

/** The `authority` option of `createRuntime` (docs/semantics.md, "Authority in group chats"). */
export const authorityOptionsSchema = z
  .object({
    roles: z
      .array(roleName())
      .min(1)
      .max(32)
      .default([...builtInRoles]),
    defaultRole: roleName().optional(),
    tools: z.record(roleName(), layerSchema).default({}),
    control: z.partialRecord(z.enum(controlActions), ruleSchema).default({}),
    attribution: z.boolean().default(true),
  })
  .strict()
  .superRefine((options, context) => {
    const known = new Set(options.roles);
    if (known.size !== options.roles.length)
      context.addIssue({ code: 'custom', path: ['roles'], message: 'roles must be distinct' });
    const named: [PropertyKey[], string | null | undefined][] = [
      [['defaultRole'], options.defaultRole],
      ...Object.keys(options.tools).map((role): [PropertyKey[], string] => [['tools', role], role]),
      ...Object.entries(options.control).flatMap(([action, rule]) => [
        [['control', action, 'any'], rule.any] as [PropertyKey[], string | null | undefined],
        [['control', action, 'own'], rule.own] as [PropertyKey[], string | null | undefined],
      ]),
    ];
    for (const [path, role] of named)
      if (typeof role === 'string' && !known.has(role))
        context.addIssue({ code: 'custom', path, message: `unknown role "${role}"` });
  });

/** The `authority` option as callers write it. */
export type AuthorityOptions = z.input<typeof authorityOptionsSchema>;

/**
 * The runtime's authority from its parsed option; without one every message that names no role has the lowest
 * built-in role (`guest`), no role has a tool layer and the model sees no sender lines, so a runtime that never
 * names roles behaves as it always did.
 */
export function resolveAuthority(
  options: z.output<typeof authorityOptionsSchema> | undefined,
): Authority & { readonly configured: boolean } {
  const parsed = options ?? authorityOptionsSchema.parse({ attribution: false });
  const defaults = defaultControlRules(parsed.roles);
  const control = Object.fromEntries(
    controlActions.map((action): [ControlAction, ControlRule] => {
      const rule = parsed.control[action] ?? {};
      const base = defaults[action];
      return [
        action,
        {
          any: rule.any === undefined ? base.any : rule.any,
          own: rule.own === undefined ? base.own : rule.own,
          requester: rule.requester ?? base.requester,
        },
      ];
    }),
  ) as Record<ControlAction, ControlRule>;
  return {
    roles: parsed.roles,
    defaultRole: parsed.defaultRole ?? (parsed.roles.at(-1) as string),
    tools: parsed.tools,
    control,
    attribution: parsed.attribution,
    configured: options !== undefined,
  };
}
