// What the tests of a failing ledger disk share (issue 22.1): a scripted model that streams words, a `side` tool
// whose executions are witnessed, and counts of what reached the model per acknowledged message.
import { z } from 'zod';
import { createRuntime, defineTool, type Ledger, type RuntimeEvent } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type ScriptEntry, type ScriptedRequest } from 'agentlanes/testing';

type FakeClock = ReturnType<typeof fakeClock>;

/** The user text a run's first model call answers (undefined for a call after a tool result). */
export function promptOf(request: ScriptedRequest): string | undefined {
  const last = request.messages.at(-1);
  return last?.role === 'user' ? last.content : undefined;
}

/** Model calls per user message (first calls of runs only). */
export function answersPerPrompt(requests: readonly ScriptedRequest[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of requests) {
    const prompt = promptOf(request);
    if (prompt !== undefined) counts.set(prompt, (counts.get(prompt) ?? 0) + 1);
  }
  return counts;
}

/** What the runs did outside the ledger: side effects executed (by tag), and what reached `onError`. */
export interface Witness {
  readonly executed: string[];
  readonly errors: unknown[];
}

/** How the runtime of a fault test streams and acts. */
export interface FaultRuntimeOptions {
  /** Words each answer streams, 10 ms apart. */
  readonly words: number;
  /** How long the `side` tool takes, ignoring its abort signal (0: at once). @default 0 */
  readonly toolMs?: number;
  /** The workspace root. @default none */
  readonly workspace?: string;
}

const ids = sequentialIds();

/**
 * A runtime on `ledger` with a scripted model that streams `words` words 10 ms apart, except that a message
 * starting with "tool" first calls the `side` tool (a side effect that must not happen twice).
 */
export function openFaultRuntime(
  ledger: Ledger,
  witness: Witness,
  now: number,
  options: FaultRuntimeOptions,
) {
  const clock = fakeClock({ now });
  const script = (request: ScriptedRequest): ScriptEntry =>
    promptOf(request)?.startsWith('tool') === true
      ? { toolCalls: [{ name: 'side', args: { tag: promptOf(request) ?? '' } }], tokenDelayMs: 10 }
      : { text: 'word '.repeat(options.words).trim(), tokenDelayMs: 10 };
  const model = scriptedModel(script, { clock });
  const toolMs = options.toolMs ?? 0;
  const side = defineTool({
    name: 'side',
    description: 'a side effect that must not happen twice',
    input: z.object({ tag: z.string() }),
    execute: async ({ tag }) => {
      witness.executed.push(tag);
      if (toolMs > 0) await clock.sleep(toolMs);
      return 'done';
    },
  });
  const runtime = createRuntime({
    ledger,
    providers: { scripted: model },
    model: { provider: 'scripted', model: 'm' },
    queue: { mode: 'followup', debounceMs: 0 },
    tools: [side],
    clock,
    ids,
    ...(options.workspace === undefined ? {} : { workspace: { root: options.workspace } }),
    onError: (error) => witness.errors.push(error),
  });
  return { runtime, clock, model };
}

/** Advance `clock` by `ms` in steps. */
export async function advance(clock: FakeClock, ms: number, step = 50): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += step) await clock.advance(step);
}

/** Advance in steps until `done` holds, at most `ms`. */
export async function advanceUntil(clock: FakeClock, done: () => boolean, ms: number): Promise<void> {
  for (let elapsed = 0; elapsed < ms && !done(); elapsed += 50) await clock.advance(50);
}

/** A raw SqliteError, not coded by the ledger. */
export function isRawSqliteError(error: unknown): boolean {
  const { name, code } = error as { name?: unknown; code?: unknown };
  return name === 'SqliteError' || (typeof code === 'string' && code.startsWith('SQLITE_'));
}

/** The events of `type` among `events`. */
export function ofType(events: readonly RuntimeEvent[], type: RuntimeEvent['type']): RuntimeEvent[] {
  return events.filter((event) => event.type === type);
}
