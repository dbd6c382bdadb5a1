/** What a scrubbed secret is replaced with. */
export const secretMask = '***';

/** Secrets shorter than this are not scrubbed: they would mask ordinary words. */
export const minSecretLength = 4;

/** A run of this many characters of a secret (a long prefix, a cut-off echo) counts as the secret leaking. */
export const secretRunLength = 12;

/** The forms a secret is echoed in: raw, URL-encoded (either hex case, `+` for space), JSON-escaped. */
export function secretForms(secret: string): string[] {
  const urlEncoded = encodeURIComponent(secret);
  const jsonEscaped = JSON.stringify(secret).slice(1, -1);
  const forms = new Set([
    secret,
    urlEncoded,
    urlEncoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
    urlEncoded.replace(/%20/g, '+'),
    jsonEscaped,
    jsonEscaped.replace(/\//g, '\\/'),
  ]);
  return [...forms];
}

type Range = readonly [start: number, end: number];

/** Every occurrence of `needle` in `text`. */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) found.push(at);
  return found;
}

/** Where `text` shares a run of `secretRunLength` characters or more with `form` (or holds all of a short one). */
function leaksOf(text: string, form: string): Range[] {
  if (form.length < secretRunLength) {
    return occurrences(text, form).map((at): Range => [at, at + form.length]);
  }
  const ranges: Range[] = [];
  for (let offset = 0; offset + secretRunLength <= form.length; offset++) {
    for (const at of occurrences(text, form.slice(offset, offset + secretRunLength))) {
      let before = 0;
      while (at - before > 0 && offset - before > 0 && text[at - before - 1] === form[offset - before - 1])
        before++;
      let after = secretRunLength;
      while (
        at + after < text.length &&
        offset + after < form.length &&
        text[at + after] === form[offset + after]
      )
        after++;
      ranges.push([at - before, at + after]);
    }
  }
  return ranges;
}

/** Overlapping or touching ranges joined, in order. */
function merged(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((left, right) => left[0] - right[0]);
  const joined: [number, number][] = [];
  for (const [start, end] of sorted) {
    const last = joined.at(-1);
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
    else joined.push([start, end]);
  }
  return joined;
}

function masked(text: string, ranges: readonly Range[]): string {
  if (ranges.length === 0) return text;
  let result = '';
  let position = 0;
  for (const [start, end] of merged(ranges)) {
    result += text.slice(position, start) + secretMask;
    position = end;
  }
  return result + text.slice(position);
}

/**
 * `text` with every known secret replaced by `***`, in every form it may be echoed in: raw, URL-encoded,
 * JSON-escaped, and any run of 12 or more of its characters (a prefix or a cut-off copy). Secrets shorter than
 * 4 characters are left alone.
 */
export function scrubSecrets(text: string, secrets: Iterable<string>): string {
  const ranges: Range[] = [];
  for (const secret of secrets) {
    if (secret.length < minSecretLength) continue;
    for (const form of secretForms(secret)) {
      if (text.length < Math.min(form.length, secretRunLength)) continue;
      ranges.push(...leaksOf(text, form));
    }
  }
  return masked(text, ranges);
}
