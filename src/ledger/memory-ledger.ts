import type { Ledger } from './index.js';
import { createMemoryCompensations } from './memory-compensations.js';
import { createMemoryConsumers } from './memory-consumers.js';
import { createMemoryDeliveries } from './memory-deliveries.js';
import { createMemoryEvents } from './memory-events.js';
import { createMemoryInbox } from './memory-inbox.js';
import { createMemoryPerform } from './memory-perform.js';
import { createMemoryPlans } from './memory-plans.js';
import { createMemoryProfiles } from './memory-profiles.js';
import { createMemoryRecovery } from './memory-recovery.js';
import { createMemoryRuns } from './memory-runs.js';
import { createMemorySessions } from './memory-sessions.js';
import { createMemoryToolCalls } from './memory-tool-calls.js';
import { createMemoryTranscript } from './memory-transcript.js';

/** Create a ledger that keeps everything in memory (tests, demos); it forgets all when the process ends. */
export function createMemoryLedger(): Ledger {
  const { perform, close } = createMemoryPerform();
  const sessions = createMemorySessions(perform);
  const inbox = createMemoryInbox(perform);
  const transcript = createMemoryTranscript(perform);
  const toolCalls = createMemoryToolCalls(perform);
  const runs = createMemoryRuns(perform, toolCalls.latestBatch);
  const events = createMemoryEvents(perform);
  const consumers = createMemoryConsumers(perform);
  return {
    writesAreImmediate: true,
    ...sessions.methods,
    ...inbox.methods,
    ...runs.methods,
    ...transcript.methods,
    ...toolCalls.methods,
    ...createMemoryCompensations(perform),
    ...createMemoryPlans(perform),
    ...events.methods,
    ...consumers,
    ...createMemoryDeliveries(perform, consumers),
    ...createMemoryProfiles(perform),
    ...createMemoryRecovery(perform, { sessions, inbox, transcript, runs, events }),
    close,
  };
}
