/** What the recovery rule reads of an accepted inbound message: its id and where it stands. */
export interface RecoverableMessage {
  readonly messageId: string;
  readonly status: string;
}

/** What the recovery rule reads of a transcript turn: the inbound messages it was made of. */
export interface AdmittingTurn {
  readonly messageIds?: readonly string[] | undefined;
}

/**
 * The messages of one session still to run after a restart, in the order given: every `pending` one, and every
 * `steered` one that no recorded turn admitted (a steer that never reached the model before a crash must not be
 * lost; one that did must not run twice). Every other status is settled. `admitted` gives the ids the session's
 * recorded turns were made of; it is called at most once, and only when a steered message is among `messages`, so a
 * ledger reads the transcript only when the answer depends on it.
 */
export function stillToRun<Message extends RecoverableMessage>(
  messages: readonly Message[],
  admitted: () => ReadonlySet<string>,
): Message[] {
  let admittedIds: ReadonlySet<string> | undefined;
  return messages.filter((message) => {
    if (message.status === 'pending') return true;
    if (message.status !== 'steered') return false;
    admittedIds ??= admitted();
    return !admittedIds.has(message.messageId);
  });
}

/** The ids of the inbound messages that `turns` were made of: a steer among them reached the model. */
export function admittedMessageIds(turns: Iterable<AdmittingTurn>): Set<string> {
  const ids = new Set<string>();
  for (const turn of turns) for (const messageId of turn.messageIds ?? []) ids.add(messageId);
  return ids;
}
