import type { ControlAction, SenderAuthority } from '../core/index.js';
import type { ToolPolicyLayer } from './tool-policy.js';

/**
 * Who may do `action`: a role at or above `any` may do it to every run; a role at or above `own` only to a run one
 * of whose messages it sent; `requester: false` refuses the senders of the run's messages whatever their role (an
 * approval is never granted by the one who asked for the action).
 */
export interface ControlRule {
  readonly any: string | null;
  readonly own: string | null;
  readonly requester: boolean;
}

/** The resolved authority settings of a runtime. */
export interface Authority {
  /** Role names, highest authority first. */
  readonly roles: readonly string[];
  /** The role of a message that names none. */
  readonly defaultRole: string;
  /** Tool-policy layer per role; a role is bound by its own layer and by every layer of the roles above it. */
  readonly tools: Readonly<Record<string, ToolPolicyLayer>>;
  readonly control: Readonly<Record<ControlAction, ControlRule>>;
  /** Whether the model sees each message's sender and role in the user turn. */
  readonly attribution: boolean;
}

/** A run as control decisions see it: who sent its messages, and the role it runs with. */
export interface RunAuthority {
  readonly senderIds: readonly string[];
  readonly role: string;
}

/**
 * The default control rules for `roles` (highest first): stop, interrupt and steer any run from the second role
 * down from the top (`admin` of the built-ins), one's own run from the second role up from the bottom (`member`);
 * approve, edit and supply results from the second role from the top, never by a sender of the run's messages.
 */
export function defaultControlRules(roles: readonly string[]): Record<ControlAction, ControlRule> {
  // With fewer than three roles the top one is the operator; with one, it is everyone.
  const operator = (roles.length >= 3 ? roles[1] : roles[0]) ?? null;
  const participant = roles[Math.max(0, roles.length - 2)] ?? null;
  const steering: ControlRule = { any: operator, own: participant, requester: true };
  const deciding: ControlRule = { any: operator, own: null, requester: false };
  return {
    stop: steering,
    interrupt: steering,
    steer: steering,
    approve: deciding,
    edit: deciding,
    supply: deciding,
  };
}

/** The rank of `role` (0 is the highest); a role the list does not know ranks below every known one. */
export function rankOf(authority: Pick<Authority, 'roles'>, role: string): number {
  const rank = authority.roles.indexOf(role);
  return rank < 0 ? authority.roles.length : rank;
}

/** True when `role` has at least the authority of `minimum`. */
export function hasAuthority(authority: Pick<Authority, 'roles'>, role: string, minimum: string): boolean {
  return rankOf(authority, role) <= rankOf(authority, minimum);
}

/** The least authority among `roles` (a missing role is the default role); the default role when there is none. */
export function leastAuthority(
  authority: Pick<Authority, 'roles' | 'defaultRole'>,
  roles: readonly (string | undefined)[],
): string {
  let least = roles.length === 0 ? authority.defaultRole : (roles[0] ?? authority.defaultRole);
  for (const role of roles) {
    const effective = role ?? authority.defaultRole;
    if (rankOf(authority, effective) > rankOf(authority, least)) least = effective;
  }
  return least;
}

/**
 * The tool-policy layers a run with `role` gets after the runtime's and the session's: the layer of every role from
 * the top down to `role`, so a lower role is never granted what a higher one is refused.
 */
export function roleToolLayers(
  authority: Pick<Authority, 'roles' | 'tools'>,
  role: string,
): ToolPolicyLayer[] {
  const rank = rankOf(authority, role);
  const layers: ToolPolicyLayer[] = [];
  for (const [index, name] of authority.roles.entries()) {
    const layer = Object.hasOwn(authority.tools, name) ? authority.tools[name] : undefined;
    if (index <= rank && layer !== undefined) layers.push(layer);
  }
  // A role no list knows is bound by every layer (it ranks below all of them).
  return layers;
}

/** True when `actor` may do `action` to `run` under the configured rules. */
export function mayControl(
  authority: Pick<Authority, 'roles' | 'control'>,
  action: ControlAction,
  actor: SenderAuthority,
  run: RunAuthority,
): boolean {
  const rule = authority.control[action];
  const requested = actor.id !== undefined && run.senderIds.includes(actor.id);
  if (requested && !rule.requester) return false;
  if (rule.any !== null && hasAuthority(authority, actor.role, rule.any)) return true;
  return requested && rule.own !== null && hasAuthority(authority, actor.role, rule.own);
}
