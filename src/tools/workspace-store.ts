import { createHash, randomUUID } from 'node:crypto';
import { link, lstat, mkdir, readFile, rename, rm, stat, writeFile, copyFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { RuntimeError } from '../core/index.js';
import {
  blobDirectory,
  openSessionFile,
  resolveInsideRoot,
  safeFileName,
  sessionDirectoryName,
  type SessionFile,
} from './workspace-paths.js';

export { blobDirectory } from './workspace-paths.js';

/** One attachment stored for a session: its hash, size and the session's copy (a hard link to the blob). */
export interface StoredBlob {
  readonly sha256: string;
  readonly size: number;
  /** The absolute path of the session's copy. */
  readonly path: string;
  readonly name: string;
  /** Remove what this store call created (the session's copy, and the blob when nothing else links it). */
  readonly undo: () => Promise<void>;
}

/** The workspace the runtime stores attachments in (`workspace.root`). */
export interface WorkspaceStore {
  readonly root: string;
  /** Store `bytes` once (content-addressed) and link them into the session's directory as `name`. */
  store(sessionKey: string, bytes: Uint8Array, name: string): Promise<StoredBlob>;
  /** The bytes of a stored blob; `not_found` when it is gone. */
  read(sha256: string): Promise<Uint8Array>;
  /**
   * Open the file a `file` part of `sessionKey` names: a relative path inside that session's own directory only
   * (no absolute path, no `..`, no link out of it; never another session's files or the blob store).
   */
  openSessionFile(sessionKey: string, path: string): Promise<SessionFile>;
}

const sha256Pattern = /^[0-9a-f]{64}$/;

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Write the blob through a temporary file and a rename, so a reader never sees half of it. */
async function writeBlob(directory: string, sha256: string, bytes: Uint8Array): Promise<boolean> {
  const target = join(directory, sha256);
  if (await exists(target)) return false;
  const temporary = join(directory, `.tmp-${randomUUID()}`);
  try {
    await writeFile(temporary, bytes, { flag: 'wx' });
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  return true;
}

/** Link the blob into the session's directory; a copy where the file system has no hard links. */
async function linkInto(blob: string, target: string): Promise<boolean> {
  if (await exists(target)) return false;
  try {
    await link(blob, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'EXDEV' && code !== 'ENOTSUP') throw error;
    await copyFile(blob, target);
  }
  return true;
}

/** Create the store of the workspace at `root` (created on first use). */
export function createWorkspaceStore(root: string): WorkspaceStore {
  const absoluteRoot = resolve(root);
  const inside = (path: string, what: string) => resolveInsideRoot(absoluteRoot, path, what);
  const blobs = async (): Promise<string> => {
    await mkdir(absoluteRoot, { recursive: true });
    const directory = await inside(blobDirectory, 'workspace blob directory');
    await mkdir(directory, { recursive: true });
    return directory;
  };
  return {
    root: absoluteRoot,
    async store(sessionKey, bytes, requestedName) {
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const blobDirectoryPath = await blobs();
      const sessionDirectory = await inside(sessionDirectoryName(sessionKey), 'session directory');
      await mkdir(sessionDirectory, { recursive: true });
      // A directory swapped for a link after the check is caught here, before anything is written.
      const directory = await inside(sessionDirectory, 'session directory');
      const name = safeFileName(requestedName);
      const path = join(directory, `${sha256.slice(0, 16)}-${name}`);
      const blob = join(blobDirectoryPath, sha256);
      const blobCreated = await writeBlob(blobDirectoryPath, sha256, bytes);
      const removeBlob = async (): Promise<void> => {
        if (blobCreated && (await stat(blob).catch(() => undefined))?.nlink === 1)
          await rm(blob, { force: true });
      };
      const linked = await linkInto(blob, path).catch(async (error: unknown) => {
        await removeBlob();
        throw error;
      });
      const undo = async (): Promise<void> => {
        if (linked) await rm(path, { force: true });
        await removeBlob();
      };
      return { sha256, size: bytes.byteLength, path, name, undo };
    },
    async read(sha256) {
      if (!sha256Pattern.test(sha256)) throw new RuntimeError('invalid_input', `not a SHA-256: "${sha256}"`);
      try {
        return await readFile(join(absoluteRoot, blobDirectory, sha256));
      } catch (error) {
        throw new RuntimeError('not_found', `attachment ${sha256} is missing from the workspace`, {
          cause: error,
        });
      }
    },
    openSessionFile: (sessionKey, path) => openSessionFile(absoluteRoot, sessionKey, path),
  };
}
