import { describe, expect, it } from 'vitest';
import { scrubSecrets, secretForms } from '../../src/core/scrub-secrets.js';

// A key with the characters that change under URL and JSON encoding.
const key = 'sk-live+AbC/dEf=GhIjKlMnOpQr/StUv+WxYz==';

/** Every window of 12 characters of every form of `secret`: none of them may survive a scrub. */
function leaks(text: string, secret: string): string[] {
  const found: string[] = [];
  for (const form of secretForms(secret)) {
    for (let start = 0; start + 12 <= form.length; start++) {
      const window = form.slice(start, start + 12);
      if (text.includes(window)) found.push(window);
    }
  }
  return found;
}

describe('scrubSecrets', () => {
  it('masks the raw key when a message echoes it', () => {
    expect(scrubSecrets(`Incorrect API key provided: ${key}.`, [key])).toBe(
      'Incorrect API key provided: ***.',
    );
  });

  it('masks the URL-encoded key in upper- and lower-case hex when a URL echoes it', () => {
    const encoded = encodeURIComponent(key);
    const lower = encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
    const text = `GET /v1?key=${encoded} and ?key=${lower}`;
    const scrubbed = scrubSecrets(text, [key]);
    expect(scrubbed).toBe('GET /v1?key=*** and ?key=***');
    expect(leaks(scrubbed, key)).toEqual([]);
  });

  it('masks the JSON-escaped key when a body escapes "/" as "\\/"', () => {
    const body = JSON.stringify({ error: { key } }).replace(/\//g, '\\/');
    const scrubbed = scrubSecrets(body, [key]);
    expect(scrubbed).toBe('{"error":{"key":"***"}}');
  });

  it('masks a run of 12 or more characters of the key when only a prefix or a cut copy is echoed', () => {
    expect(scrubSecrets(`key ${key.slice(0, 12)}… was rejected`, [key])).toBe('key ***… was rejected');
    expect(scrubSecrets(`tail ${key.slice(9, 30)}!`, [key])).toBe('tail ***!');
  });

  it('leaves a run of 11 characters and unrelated text alone when nothing longer is shared', () => {
    const text = `prefix ${key.slice(0, 11)} and plain words`;
    expect(scrubSecrets(text, [key])).toBe(text);
  });

  it('masks only whole copies of a short secret when it is under 12 characters', () => {
    expect(scrubSecrets('token abc12345 and abc123', ['abc12345'])).toBe('token *** and abc123');
  });

  it('ignores secrets shorter than 4 characters when given one', () => {
    expect(scrubSecrets('a b c abc', ['abc'])).toBe('a b c abc');
  });

  it('masks every secret and merges overlapping matches into one mask when several are known', () => {
    const other = 'AIzaSyD-0123456789abcdefghij';
    const text = `${key}${key} then ${other}`;
    expect(scrubSecrets(text, [key, other])).toBe('*** then ***');
  });
});
