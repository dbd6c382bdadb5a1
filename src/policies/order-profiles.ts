import { availableAt, freshProfileState, isAvailable } from './profile-cooldown.js';
import type { ProfileState } from './profile-cooldown.js';

/** How a profile authenticates; default ordering tries them in this order. */
export const profileKinds = ['oauth', 'token', 'api_key'] as const;

/** One kind from the closed union of profile kinds. */
export type ProfileKind = (typeof profileKinds)[number];

/** An auth profile as ordering sees it. */
export interface OrderableProfile {
  readonly id: string;
  readonly kind: ProfileKind;
}

/** Everything `orderProfiles` decides from; states missing from the map count as fresh. */
export interface OrderProfilesInput {
  readonly profiles: readonly OrderableProfile[];
  readonly states: ReadonlyMap<string, ProfileState>;
  readonly now: number;
  /** The model about to be called; a cooldown scoped to another model does not hold the profile back. */
  readonly model?: string | undefined;
  /** The session's preferred profile id. */
  readonly preferred?: string | undefined;
  /** A configured order of profile ids; profiles it omits follow, in the default order. */
  readonly explicitOrder?: readonly string[] | undefined;
}

interface Candidate {
  readonly id: string;
  readonly index: number;
  readonly kindRank: number;
  readonly explicitRank: number;
  readonly lastUsedAt: number;
  readonly availableAt: number;
  readonly available: boolean;
}

function explicitRanks(explicitOrder: readonly string[] | undefined): Map<string, number> {
  const ranks = new Map<string, number>();
  explicitOrder?.forEach((id, rank) => {
    if (!ranks.has(id)) ranks.set(id, rank);
  });
  return ranks;
}

// Explicit order, else kind (oauth, token, api_key), then least recently used, then input order.
function byPreference(left: Candidate, right: Candidate): number {
  return (
    left.explicitRank - right.explicitRank ||
    left.kindRank - right.kindRank ||
    compareNumbers(left.lastUsedAt, right.lastUsedAt) ||
    left.index - right.index
  );
}

// Subtraction of two -Infinity values gives NaN, so compare explicitly.
function compareNumbers(left: number, right: number): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Profile ids in the order to try them: the available preferred profile, then the other available ones
 * (explicit order, else by kind and least recently used), then the cooling or disabled ones, soonest first.
 */
export function orderProfiles(input: OrderProfilesInput): string[] {
  const ranks = explicitRanks(input.explicitOrder);
  const candidates = input.profiles.map((profile, index): Candidate => {
    const state = input.states.get(profile.id) ?? freshProfileState;
    return {
      id: profile.id,
      index,
      kindRank: profileKinds.indexOf(profile.kind),
      explicitRank: ranks.get(profile.id) ?? Number.MAX_SAFE_INTEGER,
      lastUsedAt: state.lastUsedAt ?? Number.NEGATIVE_INFINITY,
      availableAt: availableAt(state, input.model),
      available: isAvailable(state, input.now, input.model),
    };
  });
  const preferred = candidates.find((candidate) => candidate.id === input.preferred && candidate.available);
  const rest = candidates.filter((candidate) => candidate !== preferred);
  const ready = rest.filter((candidate) => candidate.available).sort(byPreference);
  const waiting = rest
    .filter((candidate) => !candidate.available)
    .sort((left, right) => left.availableAt - right.availableAt || byPreference(left, right));
  return [...(preferred === undefined ? [] : [preferred]), ...ready, ...waiting].map(
    (candidate) => candidate.id,
  );
}
