import { z } from 'zod';
import { defineTool, type Ledger, type Runtime, type RuntimeEvent, type Tool } from 'agentlanes';
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

/** A tool call that never settles: the process is cut while it runs. */
const hang = new Promise<never>(() => undefined);

/**
 * A tool `name` taking `{ n }` and answering `{ done: n }`, counting its starts in `starts` (shared by every
 * "process" of a test); with `hangs` it never answers, so the process is cut while it runs.
 */
export function countingTool(
  starts: Map<string, number>,
  name: string,
  options: { idempotent?: boolean; hangs?: boolean; risk?: 'high' } = {},
): Tool {
  return defineTool({
    name,
    description: `the ${name} tool`,
    input: z.object({ n: z.number() }),
    ...(options.idempotent === undefined ? {} : { idempotent: options.idempotent }),
    ...(options.risk === undefined ? {} : { risk: options.risk }),
    execute: async ({ n }) => {
      starts.set(name, (starts.get(name) ?? 0) + 1);
      if (options.hangs === true) return hang;
      return { done: n };
    },
  });
}
