import { RuntimeError } from '../core/index.js';
import { hasAuthority } from '../policies/index.js';
import type { Runtime } from '../runtime/index.js';
import type { Grant } from './capabilities.js';

/** A message's sender as a send body names it. */
interface Sender {
  readonly id: string;
  readonly name?: string | undefined;
  readonly role?: string | undefined;
}

/**
 * The sender a token's message goes with: without a token role, the message's own; with one, the message's sender
 * with that role filled in (or `token:<role>` when it names no sender), and a role above the token's is refused
 * (`forbidden`: a token cannot claim more authority than its own).
 */
export function senderFor(runtime: Runtime, grant: Grant, sender: Sender | undefined): Sender | undefined {
  const { role } = grant;
  if (role === undefined) return sender;
  if (sender?.role !== undefined && !hasAuthority(runtime.authority, role, sender.role)) {
    throw new RuntimeError(
      'forbidden',
      `send: this token speaks as "${role}" and cannot send as "${sender.role}", a higher role`,
    );
  }
  if (sender === undefined) return { id: `token:${role}`, role };
  return sender.role === undefined ? { ...sender, role } : sender;
}

/** The `by` of an abort or a decision made with this token: its role, when it has one. */
export function controllerOf(grant: Grant): { by?: { role: string } } {
  return grant.role === undefined ? {} : { by: { role: grant.role } };
}
