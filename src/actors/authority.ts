import { z } from 'zod';
import {
  builtInRoles,
  controlActions,
  roleNamePattern,
  type ControlAction,
  type SenderAuthority,
  RuntimeError,
} from '../core/index.js';
import {
  defaultControlRules,
  type Authority,
  type ControlRule,
  leastAuthority,
  roleToolLayers,
  type RunAuthority,
  type ToolPolicyLayer,
  mayControl,
} from '../policies/index.js';
import type { ActiveRun } from './session-context.js';
import type { LiveSession } from './session-registry.js';
import { wellFormed } from './inbound-message.js';

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

/** A runtime's resolved authority, and whether the application configured it (`authority` option). */
export type RuntimeAuthority = Authority & { readonly configured: boolean };

/** The authority a run has: the least among its messages, and who sent them. */
export function runAuthorityOf(authority: Authority, run: Pick<ActiveRun, 'items'>): RunAuthority {
  const senderIds = run.items.flatMap((item) => (item.senderId === undefined ? [] : [item.senderId]));
  return {
    senderIds,
    role: leastAuthority(
      authority,
      run.items.map((item) => item.role),
    ),
  };
}

/** Refuse a role the runtime does not know (`invalid_input`, naming `what` and the roles it knows). */
export function checkRole(authority: Authority, what: string, role: string | undefined): void {
  if (role === undefined || authority.roles.includes(role)) return;
  throw new RuntimeError(
    'invalid_input',
    `${what}: unknown role "${role}" (the roles are ${authority.roles.join(', ')})`,
  );
}

/** The sender of a message, as authority sees it: its role, or the default role. */
export function senderAuthorityOf(
  authority: Authority,
  sender: { readonly id?: string | undefined; readonly role?: string | undefined } | undefined,
): SenderAuthority {
  return { id: sender?.id, role: sender?.role ?? authority.defaultRole };
}

/** The tool-policy layers of the role `run` runs with (none without a run, or while no message named a role). */
export function runRoleLayers(authority: Authority, run: Pick<ActiveRun, 'items'> | null): ToolPolicyLayer[] {
  const role = run === null ? undefined : runRoleOf(authority, run);
  return role === undefined ? [] : roleToolLayers(authority, role);
}

/** The role `run` runs with: the least among its messages; undefined when none of them has a role. */
export function runRoleOf(authority: Authority, run: Pick<ActiveRun, 'items'>): string | undefined {
  const roles = run.items.map((item) => item.role);
  return roles.every((role) => role === undefined) ? undefined : leastAuthority(authority, roles);
}

/**
 * Who asks for a control action (`by` of `abort`, `approve`, `supplyToolResult`): a sender (id, name, role). Without
 * `by` the caller is the application itself, which may do everything.
 */
export const controllerSchema = z
  .object({
    id: wellFormed().min(1).max(256).optional(),
    name: wellFormed().max(256).optional(),
    role: z.string().regex(roleNamePattern, 'a role is a letter, then letters, digits, _ or -'),
  })
  .strict();

/** Who asks for a control action. */
export type Controller = z.input<typeof controllerSchema>;

/**
 * Refuse (`forbidden`, changing nothing) a control action `by` may not do to the session's active run under
 * `authority.control`; nothing to check without `by` or without a run. A bad `by` is `invalid_input`.
 */
export function assertMayControl(
  authority: RuntimeAuthority,
  session: LiveSession | undefined,
  action: ControlAction,
  by: unknown,
): void {
  if (by === undefined) return;
  const parsed = controllerSchema.safeParse(by);
  if (!parsed.success)
    throw new RuntimeError('invalid_input', `${action}: by: ${z.prettifyError(parsed.error)}`);
  checkRole(authority, `${action}: by.role`, parsed.data.role);
  const run = session?.actor.getSnapshot().context.run ?? null;
  if (run === null) return;
  if (mayControl(authority, action, parsed.data, runAuthorityOf(authority, run))) return;
  throw new RuntimeError(
    'forbidden',
    `${action}: role "${parsed.data.role}" may not ${action} run "${run.runId}" of session "${session?.key ?? ''}"`,
  );
}
