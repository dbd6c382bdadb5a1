import type { Ledger } from '../index.js';
import { createMemoryCompensations } from './compensations.js';
import { createMemoryConsumers } from './consumers.js';
import { createMemoryDeliveries } from './deliveries.js';
import { createMemoryEvents } from './events.js';
import { createMemoryInbox } from './inbox.js';
import { createMemoryPerform } from './perform.js';
import { createMemoryPlans } from './plans.js';
import { createMemoryProfiles } from './profiles.js';
import { createMemoryRecovery } from './recovery.js';
import { createMemoryRuns } from './runs.js';
import { createMemorySessions } from './sessions.js';
import { createMemoryToolCalls } from './tool-calls.js';
import { createMemoryTranscript } from './transcript.js';

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
