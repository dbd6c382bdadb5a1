import { z } from 'zod';
import type { LiveSession } from './session-registry.js';
import { roleNamePattern, type ControlAction } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import { mayControl } from '../policies/index.js';
import { wellFormed } from './inbound-message.js';
import { checkRole, runAuthorityOf, type RuntimeAuthority } from './run-authority.js';

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
