/**
 * The roles every runtime knows, highest first. An application may name its own (`authority.roles`); a message
 * carries its sender's role and a run runs with the least authority among the messages it answers.
 */
export const builtInRoles = ['owner', 'admin', 'member', 'guest'] as const;
/** One of the built-in roles. */
export type BuiltInRole = (typeof builtInRoles)[number];

/** A role name: a letter, then letters, digits, `_` or `-` (at most 32). */
export const roleNamePattern = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/;

/** What a role may be asked to do to a run that is not only its own message: the actions gated by role. */
export const controlActions = ['stop', 'interrupt', 'steer', 'approve', 'edit', 'supply'] as const;
/** One action gated by role. */
export type ControlAction = (typeof controlActions)[number];

/** Who sent a message, as far as authority goes. */
export interface SenderAuthority {
  readonly id?: string | undefined;
  readonly name?: string | undefined;
  readonly role: string;
}
