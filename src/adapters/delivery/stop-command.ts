import { isRuntimeError } from '../../core/index.js';
import type { Runtime } from '../../runtime/index.js';

/** What a chat is told when a sender's role may not stop the run (`authority.control.stop`). */
export const stopRefusedNotice = 'Only an admin, or whoever started it, can stop this run.';

/** How an adapter's stop command reads: its name, and what a refused sender is told (null: nothing). */
export interface StopCommandOptions {
  readonly stopCommand?: string;
  readonly stopRefusedNotice?: string | null;
}

/**
 * The stop command (`/stop`): abort the session's run when the sender's role may; a refusal (`forbidden`) changes
 * nothing and the chat is told (`stopRefusedNotice`) through `tell`. Any other failure is thrown.
 */
export async function stopRun(
  options: StopCommandOptions,
  session: ReturnType<Runtime['session']>,
  sender: { readonly id: string; readonly role?: string } | undefined,
  tell: (text: string) => Promise<unknown>,
): Promise<void> {
  const command = options.stopCommand ?? 'stop';
  const by = sender?.role === undefined ? {} : { by: { id: sender.id, role: sender.role } };
  const refused = await session.abort({ reason: `user sent /${command}`, ...by }).then(
    () => false,
    (error: unknown) => {
      if (!isRuntimeError(error, 'forbidden')) throw error;
      return true;
    },
  );
  const notice = options.stopRefusedNotice === undefined ? stopRefusedNotice : options.stopRefusedNotice;
  if (refused && notice !== null) await tell(notice);
}
