import { createHash } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { basename, isAbsolute, relative, resolve, sep } from 'node:path';
import { RuntimeError } from '../core/errors.js';

/** True when `path` is `root` itself or lies below it (both absolute and normalised). */
export function isInside(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest === '' || (!rest.startsWith(`..${sep}`) && rest !== '..' && !isAbsolute(rest));
}

function escape(what: string, path: string): RuntimeError {
  return new RuntimeError('invalid_input', `${what}: "${path}" is outside the workspace root`, {
    details: { path },
  });
}

/** The real path of the deepest part of `path` that exists, with the rest appended (nothing is created). */
async function realPrefix(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const parent = resolve(path, '..');
    if (parent === path) return path;
    return resolve(await realPrefix(parent), basename(path));
  }
}

/**
 * Resolve `path` (relative to `root`, or absolute) inside the workspace root: a `..` that leaves the root, or a
 * symbolic link anywhere on the way that points out of it, is refused with `invalid_input`. Returns the real path.
 */
export async function resolveInsideRoot(root: string, path: string, what = 'path'): Promise<string> {
  const absoluteRoot = resolve(root);
  const lexical = resolve(absoluteRoot, path);
  if (!isInside(absoluteRoot, lexical)) throw escape(what, path);
  const [realRoot, real] = await Promise.all([realPrefix(absoluteRoot), realPrefix(lexical)]);
  if (!isInside(realRoot, real)) throw escape(what, path);
  return real;
}

/** Characters kept as they are in a session's directory name; every other byte is percent-encoded. */
const plainCharacter = /[A-Za-z0-9_:@.-]/;

/**
 * The directory name of a session under the workspace root: the key with unsafe bytes percent-encoded (so `/`
 * and `..` cannot leave the root), shortened with a hash when it would be too long for a file name.
 */
export function sessionDirectoryName(sessionKey: string): string {
  let name = '';
  for (const character of sessionKey) {
    if (plainCharacter.test(character)) name += character;
    else
      for (const byte of Buffer.from(character, 'utf8'))
        name += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (/^\.+$/.test(name)) name = name.replaceAll('.', '%2E');
  if (name.length > 200) {
    const digest = createHash('sha256').update(sessionKey).digest('hex').slice(0, 16);
    name = `${name.slice(0, 180)}~${digest}`;
  }
  return name;
}

/** A file name safe to show and to write: no directory, no control characters, at most 100 characters. */
export function safeFileName(name: string | undefined, fallback = 'attachment'): string {
  const last = (name ?? '').split(/[/\\]/).at(-1) ?? '';
  // eslint-disable-next-line no-control-regex
  const cleaned = last.replace(/[\u0000-\u001f\u007f]/g, '_').trim();
  const limited = [...cleaned].slice(-100).join('');
  return limited.length === 0 || /^\.+$/.test(limited) ? fallback : limited;
}
