import { RuntimeError } from '../../core/index.js';
import type { InboxRecord, InboxStore, InboxUpdate } from '../contract/inbox-store.js';
import type { Perform } from './perform.js';

/** A session's inbox: records in `order`, and each message id's position in that list (its newest record). */
interface Inbox {
  readonly records: InboxRecord[];
  readonly positions: Map<string, number>;
}

/** The inbox store of the memory ledger, and what its recovery reads of it. */
export interface MemoryInbox {
  readonly methods: InboxStore;
  /** A session's records in order (not a copy: read only). */
  recordsOf(sessionKey: string): readonly InboxRecord[];
  /** Every session's records in order (not copies: read only). */
  inboxes(): IterableIterator<[string, { readonly records: readonly InboxRecord[] }]>;
}

/** Add a record in its place by `order`; a second record with an order already taken is refused. */
function insert(inbox: Inbox, record: InboxRecord): void {
  const { records, positions } = inbox;
  const last = records[records.length - 1];
  if (last === undefined || last.order < record.order) {
    // A platform id accepted again (after the dedupe window) is a new record; updates go to the newest.
    positions.set(record.messageId, records.push({ ...record }) - 1);
    return;
  }
  // Out-of-order arrival is rare: insert in place and renumber the positions after it.
  let index = records.findIndex((existing) => existing.order >= record.order);
  if (records[index]?.order === record.order) {
    throw new RuntimeError('invalid_input', `inbox order ${record.order} is already recorded`, {
      details: { sessionKey: record.sessionKey, order: record.order },
    });
  }
  records.splice(index, 0, { ...record });
  for (; index < records.length; index++) positions.set((records[index] as InboxRecord).messageId, index);
}

/** Apply `update` to the newest record of each id; records are replaced, so ones handed out do not change. */
function update(inbox: Inbox, messageIds: readonly string[], change: InboxUpdate): void {
  for (const messageId of messageIds) {
    const index = inbox.positions.get(messageId);
    if (index === undefined) continue;
    inbox.records[index] = {
      ...(inbox.records[index] as InboxRecord),
      status: change.status,
      ...(change.runId === undefined ? {} : { runId: change.runId }),
      ...(change.summary === undefined ? {} : { summary: change.summary }),
    };
  }
}

/** Keep sessions' inboxes in memory, in arrival order. */
export function createMemoryInbox(perform: Perform): MemoryInbox {
  const inboxes = new Map<string, Inbox>();
  const recordsOf = (sessionKey: string): readonly InboxRecord[] => inboxes.get(sessionKey)?.records ?? [];
  return {
    recordsOf,
    inboxes: () => inboxes.entries(),
    methods: {
      appendMessage: (record) =>
        perform(() => {
          let inbox = inboxes.get(record.sessionKey);
          if (inbox === undefined)
            inboxes.set(record.sessionKey, (inbox = { records: [], positions: new Map() }));
          insert(inbox, record);
        }),
      updateMessages: (sessionKey, messageIds, change) =>
        perform(() => {
          const inbox = inboxes.get(sessionKey);
          if (inbox !== undefined) update(inbox, messageIds, change);
        }),
      listMessages: (sessionKey, statuses) =>
        perform(() => {
          const records = recordsOf(sessionKey);
          return statuses ? records.filter((record) => statuses.includes(record.status)) : records.slice();
        }),
    },
  };
}
