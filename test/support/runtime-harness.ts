import { createMemoryLedger, createRuntime, type RuntimeEvent, type RuntimeOptions } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import {
  fakeClock,
  scriptedModel,
  type Script,
  type ScriptedModel,
  type FakeClock,
} from 'agentlanes/testing';
import { ledgerSettled } from './settling-ledger.js';

/** A runtime on the fake clock and a scripted model, recording every event it emits. */
export interface Harness {
  readonly runtime: ReturnType<typeof createRuntime>;
  readonly clock: FakeClock;
  readonly model: ScriptedModel;
  readonly events: RuntimeEvent[];
  /** The events of one type, in order. */
  of<T extends RuntimeEvent['type']>(type: T): Extract<RuntimeEvent, { type: T }>[];
  /**
   * Resolves once the ledger has no call in flight and the events it made durable reached `events`: what a step
   * that is not a clock step (a `waitForEnd`, a `send` answered without a write) leaves for the ledger to finish.
   */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** Build a harness. `options` override the defaults (in-memory ledger, provider `scripted`, model `m`). */
export function createHarness(script: Script, options: Partial<RuntimeOptions> = {}): Harness {
  const clock = fakeClock({ now: 0 });
  const model = scriptedModel(script, { clock });
  const runtime = createRuntime({
    ledger: createMemoryLedger(),
    providers: { scripted: model },
    model: { provider: 'scripted', model: 'm' },
    clock,
    ids: sequentialIds(),
    random: () => 0.5,
    ...options,
  });
  const events: RuntimeEvent[] = [];
  const controller = new AbortController();
  const done = (async () => {
    for await (const event of runtime.events({ signal: controller.signal })) events.push(event);
  })();
  return {
    runtime,
    clock,
    model,
    events,
    of: <T extends RuntimeEvent['type']>(type: T) =>
      events.filter((event): event is Extract<RuntimeEvent, { type: T }> => event.type === type),
    settled: ledgerSettled,
    async close() {
      const closing = runtime.close();
      await clock.runAll();
      await closing;
      controller.abort();
      await done;
    },
  };
}
