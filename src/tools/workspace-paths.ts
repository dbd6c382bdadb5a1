import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { basename, isAbsolute, join, posix, relative, resolve, sep, win32 } from 'node:path';
import { RuntimeError } from '../core/index.js';

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

/** The directory under the workspace root that holds every stored attachment once, named by its SHA-256. */
export const blobDirectory = '.blobs';

/** Characters kept as they are in a session's directory name; every other byte is percent-encoded. */
const plainCharacter = /[A-Za-z0-9_:@.-]/;

/**
 * The directory name of a session under the workspace root: the key with unsafe bytes percent-encoded (so `/`
 * and `..` cannot leave the root, and no key names the blob store), shortened with a hash when it would be too long for a file name.
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
  // A session keyed `.blobs` must not get the blob store as its directory (any case: some file systems ignore it).
  if (name.toLowerCase() === blobDirectory) name = `%2E${name.slice(1)}`;
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

/**
 * The one refusal of a `file` part that does not name a file of the session's own directory: the same text
 * whether the target is missing, belongs to another session, is the blob store, or lies outside the workspace,
 * so a caller learns nothing about what exists beyond its own files.
 */
export const filePartRefusal =
  "file part refused: it may name only a file in the session's own workspace directory, by a relative path";

function refusedFile(): RuntimeError {
  return new RuntimeError('invalid_input', filePartRefusal);
}

/** The segments of a plain relative path (`a/b.txt`, `./b.txt`); undefined for an absolute path or one with `..`. */
export function relativeSegments(path: string): string[] | undefined {
  if (path.includes('\0') || posix.isAbsolute(path) || win32.isAbsolute(path)) return undefined;
  const segments = path.split(/[/\\]/).filter((segment) => segment !== '' && segment !== '.');
  if (segments.length === 0 || segments.includes('..')) return undefined;
  return segments;
}

/** A file of a session's own directory, opened: its size, and its bytes. */
export interface SessionFile {
  readonly size: number;
  /** The file's bytes (at most `size` of them: a file that grew since it was opened is cut there). */
  read(): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** Where an open file really is, on systems that say (Linux's `/proc/self/fd`); undefined elsewhere. */
async function openedPath(handle: FileHandle): Promise<string | undefined> {
  return readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
}

/** Open `real` (already resolved inside `directory`) without following a link, and check it is what was judged. */
async function openJudged(directory: string, real: string): Promise<SessionFile> {
  const judged = await lstat(real);
  if (!judged.isFile()) throw refusedFile();
  const flags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
  const handle = await open(real, flags);
  try {
    // A directory on the way swapped for a link after the check opens another file: refused by its identity.
    const opened = await handle.stat();
    const where = await openedPath(handle);
    if (!opened.isFile() || opened.ino !== judged.ino || opened.dev !== judged.dev) throw refusedFile();
    if (where !== undefined && !isInside(directory, where)) throw refusedFile();
  } catch (error) {
    await handle.close();
    throw error;
  }
  const { size } = await handle.stat();
  return {
    size,
    async read() {
      const buffer = Buffer.alloc(size);
      const { bytesRead } = await handle.read(buffer, 0, size, 0);
      return buffer.subarray(0, bytesRead);
    },
    close: () => handle.close(),
  };
}

/**
 * Open the file a `file` part names, relative to the session's own directory `<root>/<session dir>/`. Refused,
 * all with one message: an absolute path, a `..`, a path whose real location (links followed) is outside the
 * session's directory, a session directory that is itself a link, anything that is not a regular file, and
 * anything missing. Another session's files and the blob store are outside, so they cannot be named.
 */
export async function openSessionFile(root: string, sessionKey: string, path: string): Promise<SessionFile> {
  const segments = relativeSegments(path);
  if (segments === undefined) throw refusedFile();
  try {
    const realRoot = await realpath(resolve(root));
    const directory = join(realRoot, sessionDirectoryName(sessionKey));
    if ((await realpath(directory)) !== directory) throw refusedFile();
    const real = await realpath(join(directory, ...segments));
    if (real === directory || !isInside(directory, real)) throw refusedFile();
    return await openJudged(directory, real);
  } catch {
    throw refusedFile();
  }
}
