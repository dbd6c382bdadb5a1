import type { SessionContext, SessionEvent } from './session-context.js';

/**
 * The context with the session's settings changed: the queue-settings override merged, or the tool layer set
 * (undefined clears it; set, not left out, because XState's `assign` merges what it is given into the context).
 */
export function configured(context: SessionContext, event: SessionEvent): SessionContext {
  if (event.type === 'CONFIGURE') return { ...context, override: { ...context.override, ...event.override } };
  if (event.type !== 'CONFIGURE_TOOLS') return context;
  return { ...context, toolPolicy: event.layer };
}
