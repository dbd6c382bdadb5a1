import type { Ledger, Runtime, RuntimeEvent } from 'agentlanes';
import type { fakeClock } from 'agentlanes/testing';

/**
 * A "process" of a crash test: a runtime on a ledger file with its own fake clock, its events kept from the start
 * of the log. `crash()` abandons it as a crash would: its ledger is closed under it (what was committed stays,
 * nothing more is written) and the runtime is never closed; `close()` closes it properly.
 */
export function crashableProcess(parts: {
  readonly runtime: Runtime;
  readonly ledger: Ledger;
  readonly clock: ReturnType<typeof fakeClock>;
  readonly sessionKey: string;
}) {
  const { runtime, ledger, clock } = parts;
  const events: RuntimeEvent[] = [];
  const stop = new AbortController();
  const reading = (async () => {
    for await (const event of runtime.events({ signal: stop.signal })) events.push(event);
  })();
  return {
    runtime,
    clock,
    events,
    chat: runtime.session(parts.sessionKey),
    async crash(): Promise<void> {
      stop.abort();
      await reading.catch(() => undefined);
      await ledger.close();
    },
    async close(): Promise<void> {
      const closing = runtime.close();
      await clock.runAll();
      await closing;
      stop.abort();
      await reading;
    },
  };
}

/** The events of `type` among `events`, typed. */
export const ofType = <T extends RuntimeEvent['type']>(events: readonly RuntimeEvent[], type: T) =>
  events.filter((event): event is Extract<RuntimeEvent, { type: T }> => event.type === type);
