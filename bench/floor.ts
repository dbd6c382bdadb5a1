/**
 * The benchmark floor: the same closed-loop workload as the runtime benchmarks, over the bare building blocks the
 * runtime is made of (zod, a p-queue session lane, a p-queue global lane, one XState actor per session with two
 * transitions, an instant model) and, for the durable case, 3 rows per message group-committed on SQLite
 * (bench/floor-store.ts). The benches run it in the same process as the runtime, so every figure is also a ratio.
 */
import { randomUUID } from 'node:crypto';
import PQueue from 'p-queue';
import { createActor, createMachine, type Snapshot } from 'xstate';
import { z } from 'zod';

/** The inbound message the floor accepts: what `send()` validates, without the options. */
const messageSchema = z
  .object({
    id: z.string().min(1).max(256),
    text: z.string().max(100_000),
    mode: z.enum(['steer', 'followup', 'collect', 'interrupt', 'reject']).optional(),
  })
  .strict();

/** The session machine of the floor: two transitions per run, idle -> running -> idle. */
const floorMachine = createMachine({
  id: 'floor-session',
  initial: 'idle',
  states: {
    idle: { on: { START: 'running' } },
    running: { on: { DONE: 'idle' } },
  },
});

type FloorActor = ReturnType<typeof createActor<typeof floorMachine>>;

/** The instant model: an async generator that streams a few tokens with no latency. */
// eslint-disable-next-line @typescript-eslint/require-await -- instant: there is nothing to wait for
async function* instantModel(): AsyncGenerator<string> {
  yield 'ok';
  yield ', ';
  yield 'done';
}

/** Where the floor keeps its rows and snapshots; the in-memory floor keeps no rows. */
export interface FloorStore {
  /** Record an accepted message; the returned promise resolves once it is durable (undefined: nothing to wait for). */
  inbox(sessionKey: string, messageId: string, text: string): Promise<void> | undefined;
  /** Record a run's start; committed with the turn's batch, nobody waits for it. */
  runStarted(runId: string, sessionKey: string): void;
  /** Record a run's output and end; resolves once durable (undefined: nothing to wait for). */
  runEnded(runId: string, text: string): Promise<void> | undefined;
  /** The persisted snapshot of a hibernated session (or a promise of it), undefined for a new one. */
  loadSnapshot(sessionKey: string): unknown;
  /** Keep the snapshots of sessions going to sleep. */
  saveSnapshots(entries: ReadonlyArray<readonly [string, unknown]>): void;
  /** Release the store (close the database). */
  close(): void;
}

/** A store that keeps no rows, only hibernated snapshots on the heap (as the in-memory ledger does). */
export function memoryFloorStore(): FloorStore {
  const snapshots = new Map<string, string>();
  return {
    inbox: () => undefined,
    runStarted: () => undefined,
    runEnded: () => undefined,
    loadSnapshot: (sessionKey) => {
      const saved = snapshots.get(sessionKey);
      const snapshot: unknown = saved === undefined ? undefined : JSON.parse(saved);
      return snapshot;
    },
    saveSnapshots: (entries) => {
      for (const [sessionKey, snapshot] of entries) snapshots.set(sessionKey, JSON.stringify(snapshot));
    },
    close: () => snapshots.clear(),
  };
}

/** One floor session: what a bench drives like a runtime session. */
export interface FloorSession {
  /** Validate, record and enqueue a message; resolves once acknowledged, with the promise of its run's end. */
  send(input: unknown): Promise<{ done: Promise<void> }>;
}

/** The floor: sessions over the bare building blocks. */
export interface Floor {
  /** The session of `key` (its actor starts, or hydrates, on its first message). */
  session(sessionKey: string): FloorSession;
  /** How many sessions have a running actor. */
  readonly liveSessions: number;
  /** Persist the snapshot of every live session and stop its actor (all are idle once their runs ended). */
  hibernateAll(): void;
  /** Wait for the global lane to drain, hibernate every session, close the store. */
  close(): Promise<void>;
}

/** Options of a floor. */
export interface FloorOptions {
  /** Global lane concurrency. @default 8 */
  concurrency?: number;
  /** Where rows and snapshots go. @default memoryFloorStore() */
  store?: FloorStore;
}

/** A per-key lane on p-queue (concurrency 1), freed once the key has no task left, as the runtime's lane is. */
function createSessionLanes(): <T>(key: string, task: () => Promise<T>) => Promise<T> {
  const lanes = new Map<string, { queue: PQueue; tasks: number }>();
  return <T>(key: string, task: () => Promise<T>): Promise<T> => {
    let lane = lanes.get(key);
    if (lane === undefined) {
      lane = { queue: new PQueue({ concurrency: 1 }), tasks: 0 };
      lanes.set(key, lane);
    }
    const owner = lane;
    owner.tasks += 1;
    const result = owner.queue.add(task);
    const release = (): void => {
      owner.tasks -= 1;
      if (owner.tasks === 0 && lanes.get(key) === owner) lanes.delete(key);
    };
    result.then(release, release);
    return result;
  };
}

/** The floor's live sessions: one actor each, hydrated from the store on first use, all hibernated at once. */
function createActors(store: FloorStore): {
  actorOf(sessionKey: string): FloorActor | Promise<FloorActor>;
  hibernateAll(): void;
  readonly size: number;
} {
  const actors = new Map<string, FloorActor>();
  const hydrating = new Map<string, Promise<FloorActor>>();

  async function hydrate(sessionKey: string): Promise<FloorActor> {
    const snapshot = await store.loadSnapshot(sessionKey);
    const actor =
      snapshot === undefined
        ? createActor(floorMachine)
        : createActor(floorMachine, { snapshot: snapshot as Snapshot<unknown> });
    actors.set(sessionKey, actor.start());
    hydrating.delete(sessionKey);
    return actor;
  }

  return {
    actorOf(sessionKey) {
      const live = actors.get(sessionKey);
      if (live !== undefined) return live;
      let loading = hydrating.get(sessionKey);
      if (loading === undefined) {
        loading = hydrate(sessionKey);
        hydrating.set(sessionKey, loading);
      }
      return loading;
    },
    hibernateAll() {
      store.saveSnapshots([...actors].map(([key, actor]) => [key, actor.getPersistedSnapshot()] as const));
      for (const actor of actors.values()) actor.stop();
      actors.clear();
    },
    get size() {
      return actors.size;
    },
  };
}

/** Create a floor: in memory by default, durable with a SQLite store. */
export function createFloor(options: FloorOptions = {}): Floor {
  const store = options.store ?? memoryFloorStore();
  const globalLane = new PQueue({ concurrency: options.concurrency ?? 8 });
  const onSessionLane = createSessionLanes();
  const actors = createActors(store);
  const runPrefix = randomUUID();
  let runs = 0;

  async function run(actor: FloorActor, sessionKey: string): Promise<void> {
    const runId = `${runPrefix}/${++runs}`;
    actor.send({ type: 'START' });
    if (actor.getSnapshot().value !== 'running') throw new Error(`${sessionKey}: START did not start`);
    store.runStarted(runId, sessionKey);
    let text = '';
    for await (const token of instantModel()) text += token;
    actor.send({ type: 'DONE' });
    await store.runEnded(runId, text);
  }

  return {
    session: (sessionKey) => ({
      async send(input) {
        const message = messageSchema.parse(input);
        const actor = await actors.actorOf(sessionKey);
        await store.inbox(sessionKey, message.id, message.text);
        const done = onSessionLane(sessionKey, () => globalLane.add(() => run(actor, sessionKey)));
        return { done };
      },
    }),
    get liveSessions() {
      return actors.size;
    },
    hibernateAll: () => actors.hibernateAll(),
    async close() {
      await globalLane.onIdle();
      actors.hibernateAll();
      store.close();
    },
  };
}
