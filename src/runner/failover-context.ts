import type { ModelProvider, ProviderCredential, ThinkingLevel } from '../providers/index.js';

/** One model the run may use, in fallback order. */
export interface ModelCandidate {
  readonly providerName: string;
  readonly provider: ModelProvider;
  readonly model: string;
}

/** An auth profile picked for an attempt: its id and its credential, resolved at call time. */
export interface PickedProfile {
  readonly id: string;
  readonly credential: () => ProviderCredential;
}

/** The failure reasons profile bookkeeping cares about (see policies/classify-failure). */
export type ProfileFailureReason = string;

/** Auth profiles of the providers, as the attempt loop uses them; the runtime keeps and persists their state. */
export interface AuthProfilePool {
  /** Whether `provider` has auth profiles at all (if not, calls carry no credential). */
  has(provider: string): boolean;
  /**
   * The next available profile for `provider`/`model` not in `tried`, in order (the session's `preferred` one
   * first when it is available); undefined when none is left.
   */
  next(
    provider: string,
    model: string,
    tried: ReadonlySet<string>,
    now: number,
    preferred?: string,
  ): PickedProfile | undefined;
  /** Record a failure; returns when the profile is usable again (0 when it was not cooled). */
  failed(
    profileId: string,
    failure: { reason: ProfileFailureReason; model: string; retryAfterMs?: number; now: number },
  ): number;
  succeeded(profileId: string, now: number): void;
  /**
   * Why `provider` has no profile to offer for `model` at `now`: the usable profile that comes back soonest (and
   * when), and a message per profile that cannot be used at all because its secret is missing.
   */
  availability(provider: string, model: string, now: number): ProfileAvailability;
  /** Remove every known secret from `text` (error messages must never carry one). */
  readonly scrub: (text: string) => string;
}

/** The soonest usable profile of a provider, and the profiles missing their secret (configuration errors). */
export interface ProfileAvailability {
  readonly soonest?: { readonly profileId: string; readonly at: number };
  /** One message per profile whose secret is missing, naming the environment variable. */
  readonly missing: readonly string[];
}

/** What price a model has, per million tokens; undefined when unknown (counted as 0, and said so). */
export type PriceLookup = (provider: string, model: string) => { input: number; output: number } | undefined;

/** The failover state of one run: what its model calls change as the run goes. */
export interface FailoverState {
  /** The thinking level to start from; lowered for the rest of the run on `thinking_unsupported`. */
  thinking: ThinkingLevel | undefined;
  /** Cost of the run so far. */
  cost: number;
  /** The session's preferred auth profile. */
  readonly preferredProfile?: string;
}
