import type { Clock } from '../core/index.js';
import type { EventOf, RuntimeEvent } from '../core/index.js';
import type { Runtime } from '../runtime/index.js';
import type { OpenStreams } from './open-streams.js';

/** Counters of what the runtime did since the server started, fed from its event stream. */
export interface RuntimeCounters {
  readonly messages: Map<string, number>;
  readonly runs: Map<string, number>;
  readonly laneWaits: Map<string, { count: number; totalMs: number }>;
  readonly cooldowns: Map<string, number>;
  /** Stop following the runtime's events; resolves once the stream ended. */
  stop(): Promise<void>;
}

/** The event types the counters follow. */
const countedTypes = [
  'message.received',
  'message.duplicate',
  'message.rejected',
  'run.ended',
  'lane.waited',
  'profile.cooldown',
] as const;
type CountedType = (typeof countedTypes)[number];
type CounterMaps = Omit<RuntimeCounters, 'stop'>;

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** What each counted event adds to the counters. */
const counting: {
  readonly [T in CountedType]: (counters: CounterMaps, event: EventOf<T>) => void;
} = {
  'message.received': (counters, event) => bump(counters.messages, event.disposition),
  // A duplicate and a refusal are announced by their own events (no `message.received`).
  'message.duplicate': (counters) => bump(counters.messages, 'duplicate'),
  'message.rejected': (counters) => bump(counters.messages, 'rejected'),
  'run.ended': (counters, event) => bump(counters.runs, event.status),
  'lane.waited': (counters, event) => {
    const wait = counters.laneWaits.get(event.lane) ?? { count: 0, totalMs: 0 };
    counters.laneWaits.set(event.lane, { count: wait.count + 1, totalMs: wait.totalMs + event.waitedMs });
  },
  'profile.cooldown': (counters, event) => bump(counters.cooldowns, event.profileId),
};

/** Count one event into the counters. */
function count(counters: CounterMaps, event: RuntimeEvent): void {
  const add = counting[event.type as CountedType] as
    ((counters: CounterMaps, event: RuntimeEvent) => void) | undefined;
  add?.(counters, event);
}

/** Follow the runtime's events from now on and count messages, runs, lane waits and cooldowns. */
export function countRuntimeEvents(runtime: Runtime, onError: (error: unknown) => void): RuntimeCounters {
  const controller = new AbortController();
  const counters = {
    messages: new Map<string, number>(),
    runs: new Map<string, number>(),
    laneWaits: new Map<string, { count: number; totalMs: number }>(),
    cooldowns: new Map<string, number>(),
  };
  const done = (async () => {
    for await (const event of runtime.events({
      after: 'now',
      types: [...countedTypes],
      signal: controller.signal,
    })) {
      count(counters, event);
    }
  })().catch(onError);
  return {
    ...counters,
    stop() {
      controller.abort();
      return done;
    },
  };
}

/** One Prometheus sample line; label values are escaped as the text format asks. */
function sample(name: string, labels: Record<string, string>, value: number): string {
  const pairs = Object.entries(labels).map(
    ([key, text]) => `${key}="${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return `${name}${pairs.length === 0 ? '' : `{${pairs.join(',')}}`} ${value}`;
}

/** A metric family: its HELP and TYPE lines, then its samples. */
function family(name: string, type: 'counter' | 'gauge', help: string, samples: string[]): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples];
}

/** The families read off `runtime.stats()` now: live sessions, lanes (the subagent lane too), profiles cooling. */
function stateFamilies(runtime: Runtime, clock: Clock): string[] {
  const stats = runtime.stats();
  const lanes = Object.entries(stats.lanes);
  const profiles = Object.entries(stats.profiles);
  return [
    ...family('agentlanes_live_sessions', 'gauge', 'Sessions with a live actor.', [
      sample('agentlanes_live_sessions', {}, stats.liveSessions),
    ]),
    ...family(
      'agentlanes_lane_pending',
      'gauge',
      'Tasks waiting in a global lane.',
      lanes.map(([lane, value]) => sample('agentlanes_lane_pending', { lane }, value.pending)),
    ),
    ...family(
      'agentlanes_lane_running',
      'gauge',
      'Tasks running in a global lane.',
      lanes.map(([lane, value]) => sample('agentlanes_lane_running', { lane }, value.running)),
    ),
    ...family('agentlanes_subagent_lane_pending', 'gauge', 'Subagent runs waiting in the subagent lane.', [
      sample('agentlanes_subagent_lane_pending', {}, stats.subagents.pending),
    ]),
    ...family('agentlanes_subagent_lane_running', 'gauge', 'Subagent runs running in the subagent lane.', [
      sample('agentlanes_subagent_lane_running', {}, stats.subagents.running),
    ]),
    ...family(
      'agentlanes_profile_cooling',
      'gauge',
      '1 while an auth profile is cooling down.',
      profiles.map(([profile, value]) =>
        sample('agentlanes_profile_cooling', { profile }, value.availableAt > clock.now() ? 1 : 0),
      ),
    ),
  ];
}

/** A counter family with one label, from a map of label value to count. */
function counterFamily(
  name: string,
  help: string,
  label: string,
  values: Iterable<[string, number]>,
): string[] {
  return family(
    name,
    'counter',
    help,
    [...values].map(([key, value]) => sample(name, { [label]: key }, value)),
  );
}

/** The families counted from events since start, and the event streams. */
function countedFamilies(counters: RuntimeCounters, streams: OpenStreams): string[] {
  const waits = [...counters.laneWaits];
  return [
    ...counterFamily(
      'agentlanes_messages_total',
      'Inbound messages by disposition.',
      'disposition',
      counters.messages,
    ),
    ...counterFamily('agentlanes_runs_total', 'Runs ended, by status.', 'status', counters.runs),
    ...counterFamily(
      'agentlanes_lane_waits_total',
      'Lane waits longer than warnAfterMs.',
      'lane',
      waits.map(([lane, wait]) => [lane, wait.count]),
    ),
    ...counterFamily(
      'agentlanes_lane_wait_ms_total',
      'Milliseconds spent in those waits.',
      'lane',
      waits.map(([lane, wait]) => [lane, wait.totalMs]),
    ),
    ...counterFamily(
      'agentlanes_profile_cooldowns_total',
      'Cooldowns started.',
      'profile',
      counters.cooldowns,
    ),
    ...family('agentlanes_event_stream_clients', 'gauge', 'Open event streams.', [
      sample('agentlanes_event_stream_clients', {}, streams.size),
    ]),
    ...family('agentlanes_event_stream_slow_clients_total', 'counter', 'Streams cut for a slow client.', [
      sample('agentlanes_event_stream_slow_clients_total', {}, streams.slowClients),
    ]),
  ];
}

/** The figures `/metrics` shows, in the Prometheus text format (counters count since the server started). */
export function renderMetrics(input: {
  runtime: Runtime;
  counters: RuntimeCounters;
  streams: OpenStreams;
  clock: Clock;
}): string {
  const lines = [
    ...countedFamilies(input.counters, input.streams),
    ...stateFamilies(input.runtime, input.clock),
  ];
  return `${lines.join('\n')}\n`;
}
