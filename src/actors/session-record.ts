import type { Snapshot } from 'xstate';
import type { SessionRecord } from '../ledger/index.js';
import type { QueueSettingsInput } from '../policies/index.js';
import type { SessionContext } from './session-context.js';
import type { SessionActor } from './session-machine.js';

/** What a session's ledger row stores beside its snapshot: the settings of the machine's context. */
export interface SessionSettings {
  readonly override?: QueueSettingsInput;
  readonly toolPolicy?: unknown;
}

/** The settings of a stored session row, as the machine's context holds them (none when the row has none). */
export function settingsOf(record: SessionRecord | undefined): SessionSettings {
  const override: QueueSettingsInput = { ...(record?.override ?? {}) };
  return {
    ...(Object.keys(override).length === 0 ? {} : { override }),
    ...(record?.toolPolicy === undefined ? {} : { toolPolicy: record.toolPolicy }),
  };
}

/** The context with exactly the row's settings (the row's columns are where they are stored). */
export function withSettings(context: SessionContext, settings: SessionSettings): SessionContext {
  const { override: _override, toolPolicy: _toolPolicy, ...rest } = context;
  return { ...rest, ...settings };
}

/** A restorable snapshot with the row's settings in its context. */
export function snapshotWithSettings(
  snapshot: Snapshot<unknown>,
  settings: SessionSettings,
): Snapshot<unknown> {
  const persisted = snapshot as unknown as { context: SessionContext };
  return { ...persisted, context: withSettings(persisted.context, settings) } as unknown as Snapshot<unknown>;
}

/**
 * The ledger row of a live session: its settings go to their columns, the snapshot without them (nor the
 * unobserved end, which only a live session answers).
 */
export function recordOf(
  session: {
    readonly key: string;
    readonly actor: SessionActor;
    readonly epoch: number;
    readonly lastSeq: number;
  },
  now: number,
): SessionRecord {
  const snapshot = session.actor.getPersistedSnapshot() as unknown as { context: SessionContext };
  const { override, toolPolicy, unobservedEnd: _live, ...context } = snapshot.context;
  return {
    sessionKey: session.key,
    override: override ?? {},
    ...(toolPolicy === undefined ? {} : { toolPolicy }),
    snapshot: { ...snapshot, context },
    epoch: session.epoch,
    lastSeq: session.lastSeq,
    updatedAt: now,
  };
}
