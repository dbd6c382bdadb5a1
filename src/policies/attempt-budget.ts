/** Fewest attempts a run may make, however few profiles it has. */
export const minAttempts = 32;

/** Most attempts a run may make, however many profiles it has. */
export const maxAttemptsCap = 160;

/** Attempts allowed for one run: `clamp(24 + 8 × profiles, 32, 160)`; NaN counts as 0 profiles. */
export function maxAttempts(profileCount: number): number {
  const profiles = Number.isNaN(profileCount) ? 0 : Math.max(0, Math.floor(profileCount));
  return Math.min(Math.max(24 + 8 * profiles, minAttempts), maxAttemptsCap);
}
