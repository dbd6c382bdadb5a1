import type { InlineKind } from '../core/index.js';

/** One row of a capability table: models whose name matches `model` (`*` matches any run of characters). */
export interface InlineCapability {
  readonly model: string;
  /** The kinds of content these models take inline. */
  readonly accepts: readonly InlineKind[];
}

/** The media types each inline kind covers: what both OpenAI and Anthropic document for their content parts. */
const kindsByMediaType: Readonly<Record<string, InlineKind>> = {
  'image/png': 'image',
  'image/jpeg': 'image',
  'image/gif': 'image',
  'image/webp': 'image',
  'audio/wav': 'audio',
  'audio/x-wav': 'audio',
  'audio/wave': 'audio',
  'audio/mpeg': 'audio',
  'audio/mp3': 'audio',
  'application/pdf': 'pdf',
};

/** The bare, lower-case media type (`Image/PNG; q=1` -> `image/png`). */
export function bareMediaType(mediaType: string): string {
  return (mediaType.split(';')[0] ?? '').trim().toLowerCase();
}

/** The inline kind of a media type; undefined when no model takes that type inline. */
export function inlineKindOf(mediaType: string): InlineKind | undefined {
  const bare = bareMediaType(mediaType);
  return Object.hasOwn(kindsByMediaType, bare) ? kindsByMediaType[bare] : undefined;
}

/** OpenAI chat completions: vision models take images and PDF files; the audio models take `input_audio`. */
export const openaiInlineCapabilities: readonly InlineCapability[] = [
  { model: 'gpt-4o-audio*', accepts: ['audio'] },
  { model: 'gpt-4o-mini-audio*', accepts: ['audio'] },
  { model: 'gpt-audio*', accepts: ['audio'] },
  { model: 'gpt-4o*', accepts: ['image', 'pdf'] },
  { model: 'gpt-4.1*', accepts: ['image', 'pdf'] },
  { model: 'gpt-5*', accepts: ['image', 'pdf'] },
  { model: 'o1*', accepts: ['image', 'pdf'] },
  { model: 'o3*', accepts: ['image', 'pdf'] },
  { model: 'o4*', accepts: ['image', 'pdf'] },
];

/** Anthropic Messages API: every Claude model takes `image` and `document` (PDF) blocks, none takes audio. */
export const anthropicInlineCapabilities: readonly InlineCapability[] = [
  { model: 'claude-*', accepts: ['image', 'pdf'] },
];

/** True when `model` matches the glob `pattern` (`*` matches any run of characters, case-sensitive). */
export function modelMatches(pattern: string, model: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === model;
  const first = parts[0] as string;
  const last = parts[parts.length - 1] as string;
  if (!model.startsWith(first) || model.length < first.length + last.length || !model.endsWith(last))
    return false;
  let at = first.length;
  const end = model.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = model.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/**
 * The kinds `model` takes inline: the first matching row of the tables in order (the runtime's overrides first,
 * then the provider's own table); nothing when no row matches.
 */
export function inlineKindsFor(
  model: string,
  tables: readonly (readonly InlineCapability[])[],
): readonly InlineKind[] {
  for (const table of tables) {
    const row = table.find((entry) => modelMatches(entry.model, model));
    if (row !== undefined) return row.accepts;
  }
  return [];
}

/** A model a run may use, and what it takes inline. */
export interface InlineCandidate {
  readonly provider: string;
  readonly model: string;
  readonly accepts: readonly InlineKind[];
}

/** Why an inline part is refused: the first kind some candidate model cannot take. */
export interface InlineRefusal {
  readonly kind: InlineKind;
  readonly provider: string;
  readonly model: string;
}

/**
 * Whether every model a run may use (the primary and each fallback, since failover may reach any of them) takes
 * every inline kind asked for; the first refusal otherwise. No fallback to file mode: the caller asked for inline.
 */
export function refuseInline(
  kinds: readonly InlineKind[],
  candidates: readonly InlineCandidate[],
): InlineRefusal | undefined {
  for (const kind of kinds) {
    const refusing = candidates.find((candidate) => !candidate.accepts.includes(kind));
    if (refusing !== undefined) return { kind, provider: refusing.provider, model: refusing.model };
  }
  return undefined;
}
