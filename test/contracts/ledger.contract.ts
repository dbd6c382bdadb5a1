import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import type { Ledger } from '../../src/ledger/index.js';
import { describeEventsContract } from './ledger-events.contract.js';
import { describeCompensationsContract } from './ledger-compensations.contract.js';
import { describeConsumersContract } from './ledger-consumers.contract.js';
import { describeDeliveriesContract } from './ledger-deliveries.contract.js';
import {
  compensation,
  errorOf,
  event,
  message,
  plan,
  run,
  session,
  stepResult,
  toolCall,
  turn,
} from './ledger-fixtures.contract.js';
import { describeInboxContract } from './ledger-inbox.contract.js';
import { describePlansContract } from './ledger-plans.contract.js';
import { describeProfilesContract } from './ledger-profiles.contract.js';
import { describeRecoveryContract } from './ledger-recovery.contract.js';
import { describeSessionBatchContract } from './ledger-session-batch.contract.js';
import { describeCloseAfterContract } from './ledger-close-after.contract.js';
import { describeRunsContract } from './ledger-runs.contract.js';
import { describeSessionsContract } from './ledger-sessions.contract.js';
import { describeToolCallsContract } from './ledger-tool-calls.contract.js';
import { describeTranscriptContract } from './ledger-transcript.contract.js';
import { describeForksContract } from './ledger-forks.contract.js';

/** A closed ledger rejects every method with runtime_closed. */
function describeCloseContract(current: () => Ledger): void {
  describe('close', () => {
    it('rejects every method with runtime_closed when the ledger is closed', async () => {
      const ledger = current();
      await ledger.close();
      const usage = { inputTokens: 0, outputTokens: 0 };
      const calls: Array<() => Promise<unknown>> = [
        () => ledger.getSession('s1'),
        () => ledger.loadSession('s1'),
        () => ledger.listSessionsWithPending(),
        () => ledger.putSession(session('s1')),
        () => ledger.listSessions(),
        () => ledger.listSessionKeys({ limit: 1 }),
        () => ledger.appendMessage(message('s1', 'm1', 1)),
        () => ledger.updateMessages('s1', ['m1'], { status: 'consumed' }),
        () => ledger.listMessages('s1'),
        () => ledger.openRun(run('s1', 'r1')),
        () => ledger.closeRun('r1', { status: 'completed', endedAt: 1, text: '', usage }),
        () => ledger.getRun('r1'),
        () => ledger.listRuns('s1'),
        () => ledger.listOpenRuns(),
        () => ledger.listPausedRuns(),
        () => ledger.setRunStatus('r1', 'awaiting_approval'),
        () => ledger.runText('r1'),
        () => ledger.appendTurns([turn('s1', 'r1', 0)]),
        () => ledger.listTurns('s1'),
        () => ledger.listTurns('s1', { last: 1 }),
        () => ledger.listRunTurns('r1'),
        () => ledger.forkTranscript({ sessionKey: 'c', parentKey: 's1', turns: 0, at: 1 }),
        () => ledger.getFork('c'),
        () => ledger.putToolCalls([toolCall('s1', 'r1', 1, 0)]),
        () => ledger.updateToolCall({ runId: 'r1', turn: 1, position: 0 }, { status: 'cancelled' }),
        () => ledger.listToolCalls('r1'),
        () => ledger.rememberedTools('s1', 'r1'),
        () => ledger.appendCompensation(compensation('s1', 'r1', 1)),
        () => ledger.updateCompensation('r1', 1, { status: 'done', undoneAt: 1 }),
        () => ledger.listCompensations('r1'),
        () => ledger.putPlan(plan('s1', 'r1')),
        () => ledger.getPlan('r1'),
        () => ledger.approvePlanSteps('r1', ['send']),
        () => ledger.putStepResult(stepResult('r1', 'fetch', 1)),
        () => ledger.listStepResults('r1'),
        () => ledger.appendEvents([event(1, 's1', 1)]),
        () => ledger.readEvents({}),
        () => ledger.lastCursor(),
        () => ledger.pruneEvents(1),
        () => ledger.getConsumer('replies'),
        () => ledger.putConsumer({ consumer: 'replies', cursor: 1, updatedAt: 1 }),
        () => ledger.loadProfileStates(),
        () => ledger.saveProfileState('oa-1', { errorCount: 0 }, 1),
      ];
      for (const call of calls) expect(isRuntimeError(await errorOf(call()), 'runtime_closed')).toBe(true);
    });

    it('resolves when close is called a second time', async () => {
      await current().close();
      await expect(current().close()).resolves.toBeUndefined();
    });
  });
}

/**
 * Declare the tests every `Ledger` implementation must pass: one suite per store (each typed against its store's
 * interface), the reads a restart makes across them, and close; with `capabilities`, the suites of the optional
 * parts it implements (`closesWith`). `makeLedger` gives a fresh, empty ledger for each test; `cleanup` runs after
 * it is closed.
 */
export function describeLedgerContract(
  name: string,
  makeLedger: () => Promise<Ledger> | Ledger,
  cleanup?: () => Promise<void>,
  capabilities: { readonly closesWith?: boolean } = {},
): void {
  describe(`Ledger contract: ${name}`, () => {
    let ledger: Ledger;
    const current = (): Ledger => ledger;

    beforeEach(async () => {
      ledger = await makeLedger();
    });

    afterEach(async () => {
      await ledger.close().catch(() => undefined);
      await cleanup?.();
    });

    describeSessionsContract(current);
    describeInboxContract(current);
    describeRunsContract(current);
    describeTranscriptContract(current);
    describeForksContract(current);
    describeToolCallsContract(current);
    describeCompensationsContract(current);
    describePlansContract(current);
    describeEventsContract(current);
    describeConsumersContract(current);
    describeDeliveriesContract(current);
    describeProfilesContract(current);
    describeRecoveryContract(current);
    describeSessionBatchContract(current);
    describeCloseContract(current);
    if (capabilities.closesWith === true) describeCloseAfterContract(current);
  });
}
