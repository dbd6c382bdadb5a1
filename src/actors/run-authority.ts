import type { ActiveRun } from './session-context.js';
import type { SenderAuthority } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import { leastAuthority, roleToolLayers, type Authority, type RunAuthority } from '../policies/index.js';
import type { ToolPolicyLayer } from '../policies/index.js';

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
