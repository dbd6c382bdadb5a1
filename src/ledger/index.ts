export {
  inboxStatuses,
  type InboxStatus,
  type InboxRecord,
  type InboxUpdate,
  type RunRecord,
  type RunClose,
  type TurnRecord,
  type SessionRecord,
  type EventQuery,
  type Ledger,
  type SessionState as LedgerSessionState,
} from './ledger.js';
export { createMemoryLedger } from './memory-ledger.js';
export { createSqliteLedger, type SqliteLedgerOptions } from './sqlite-ledger.js';
