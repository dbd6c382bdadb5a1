import { createRuntime, isRuntimeError, type RuntimeEvent } from 'agentlanes';
import { fakeClock, scriptedModel, type ScriptEntry } from 'agentlanes/testing';

/**
 * A runtime on the SQLite ledger file at `path` (the scripted model answers `reply`, "done" by default; followup
 * mode), with every event and every reported error kept: what the corrupt-row tests open, damage the file under,
 * and open again.
 */
export function startOnFile(path: string, reply: ScriptEntry = { text: 'done' }) {
  const clock = fakeClock({ now: 10_000 });
  const model = scriptedModel(() => reply, { clock });
  const errors: unknown[] = [];
  const runtime = createRuntime({
    ledger: { path },
    providers: { scripted: model },
    model: { provider: 'scripted', model: 'm' },
    queue: { mode: 'followup', debounceMs: 100 },
    clock,
    onError: (error) => errors.push(error),
  });
  const events: RuntimeEvent[] = [];
  const stop = new AbortController();
  const reading = (async () => {
    for await (const event of runtime.events({ signal: stop.signal })) events.push(event);
  })();
  return {
    runtime,
    clock,
    model,
    errors,
    events,
    /** Runs started past `after` only: a second runtime on the file replays the first one's events. */
    started: (after = 0) =>
      events.filter((event) => event.type === 'run.started' && event.cursor > after).length,
    corruptErrors: () => errors.filter((error) => isRuntimeError(error, 'ledger_corrupt')),
    async close(): Promise<void> {
      const closing = runtime.close();
      await clock.runAll();
      await closing;
      stop.abort();
      await reading;
    },
  };
}

/** What `promise` rejects with, or undefined when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
}
