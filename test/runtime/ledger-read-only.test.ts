// A real filesystem that turns read-only under the SQLite ledger while runs stream (issue 22 points 1 and 4): an
// ext4 image on a loop device mounted with errors=remount-ro, where the kernel's own fs-error trigger makes it
// read-only as a failing disk does (Linux refuses `mount -o remount,ro` while the ledger holds files open for
// writing). It needs root, a loop device and ext4's trigger; CI runs as root on such a machine.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteLedger, isRuntimeError, type RuntimeEvent } from 'agentlanes';
import { createDeferred } from '../../src/core/deferred.js';
import {
  advance,
  advanceUntil,
  isRawSqliteError,
  ofType,
  openFaultRuntime,
  type Witness,
} from '../support/disk-fault.js';

const isRoot = process.getuid?.() === 0;
const canMountLoop = isRoot && existsSync('/dev/loop-control') && existsSync('/sys/fs/ext4');

/** The files this process holds open under `directory`. */
function openFilesUnder(directory: string): string[] {
  const held: string[] = [];
  for (const descriptor of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(join('/proc/self/fd', descriptor));
      if (target.startsWith(`${directory}/`)) held.push(target);
    } catch {
      // Closed between the listing and the read.
    }
  }
  return held;
}

describe.runIf(canMountLoop)('createRuntime (a SQLite ledger whose filesystem turns read-only)', () => {
  let base = '';
  let image = '';
  let mount = '';
  let mounted = false;

  const mountImage = (): void => {
    execFileSync('mount', ['-o', 'loop,errors=remount-ro', image, mount]);
    mounted = true;
  };
  const unmount = (): void => {
    if (!mounted) return;
    execFileSync('umount', ['-l', mount]);
    mounted = false;
  };

  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'agentlanes-read-only-'));
    image = join(base, 'disk.img');
    mount = join(base, 'disk');
    mkdirSync(mount);
    execFileSync('truncate', ['-s', '64M', image]);
    execFileSync('mkfs.ext4', ['-q', '-F', image]);
    mountImage();
  });

  afterAll(() => {
    unmount();
    if (base !== '') rmSync(base, { recursive: true, force: true });
  });

  it('stops the runs at the fault, reports it once, closes every handle, and the file opens again after repair', async () => {
    const path = join(mount, 'ledger.db');
    const ledger = createSqliteLedger({ path });
    const witness: Witness = { executed: [], errors: [] };
    const workspace = join(base, 'workspace');
    const options = { words: 40, toolMs: 300, workspace };
    const { runtime, clock, model } = openFaultRuntime(ledger, witness, 10_000, options);
    const events: RuntimeEvent[] = [];
    const noticed = createDeferred<void>();
    const stream = (async () => {
      for await (const event of runtime.events()) {
        events.push(event);
        if (event.type === 'ledger.unavailable') noticed.resolve();
      }
    })();
    for (let index = 0; index < 10; index++) {
      const key = `chat:${index}`;
      await runtime
        .session(key)
        .send({ id: `${key}-a`, text: `${index % 3 === 0 ? 'tool ' : ''}a ${index}` });
      await runtime.session(key).send({ id: `${key}-b`, text: `b ${index}` });
    }
    await advance(clock, 100);
    expect(model.calls).toBeGreaterThan(0);

    const device = basename(
      execFileSync('findmnt', ['-n', '-o', 'SOURCE', mount], { encoding: 'utf8' }).trim(),
    );
    writeFileSync(`/sys/fs/ext4/${device}/trigger_fs_error`, 'agentlanes test\n');
    const reported = () =>
      witness.errors.filter((error) => isRuntimeError(error, 'ledger_unavailable')).length;
    await advanceUntil(clock, () => reported() === 1, 5_000);
    expect(reported()).toBe(1);
    const refused = await runtime
      .session('chat:0')
      .send({ id: 'during', text: 'sent while read-only' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isRuntimeError(refused, 'ledger_unavailable')).toBe(true);
    await advance(clock, 1_000);
    const calledAtFault = model.calls;
    await advance(clock, 3_000);
    // The runs stopped at the first write they could not make: nothing more reached the model.
    expect(model.calls).toBe(calledAtFault);
    // Subscribers get the notice during the fault, once the token deltas buffered before it failed to be written
    // (their buffer is written out on a real 50 ms timer): a real wait, on a deferred.
    await noticed.promise;
    expect(ofType(events, 'ledger.unavailable')).toHaveLength(1);

    // close() on a read-only filesystem resolves and lets go of every file under it (the lock included).
    const closing = runtime.close().then(
      () => undefined,
      (error: unknown) => error,
    );
    await clock.runAll();
    const closeFailure = await closing;
    // close() may fail on a disk that takes no write (what it could not flush); it says so coded.
    if (closeFailure !== undefined) expect(isRuntimeError(closeFailure, 'ledger_unavailable')).toBe(true);
    await stream;
    // Closed by the runtime already; a second close does no harm and is coded if it fails.
    const closeError = await ledger.close().then(
      () => undefined,
      (error: unknown) => error,
    );
    if (closeError !== undefined) expect(isRuntimeError(closeError, 'ledger_unavailable')).toBe(true);
    expect(openFilesUnder(mount)).toEqual([]);
    expect(witness.errors.filter(isRawSqliteError)).toEqual([]);
    expect(reported()).toBe(1);
    for (const report of witness.errors) expect((report as Error).message).not.toContain(mount);

    // The disk is repaired and mounted again: the same file opens (no ledger_locked, nothing corrupt) and runs.
    unmount();
    try {
      execFileSync('e2fsck', ['-f', '-y', image], { stdio: 'ignore' });
    } catch (error) {
      // Exit status 1: errors were found and fixed, as expected after a forced error.
      if ((error as { status?: number }).status !== 1) throw error;
    }
    mountImage();
    const executedBefore = witness.executed.length;
    const reopened = openFaultRuntime(createSqliteLedger({ path }), witness, 1_000_000, options);
    try {
      await reopened.runtime.session('chat:new').send({ id: 'after', text: 'after the repair' });
      await advance(reopened.clock, 30_000);
      expect(reopened.runtime.session('chat:new').status()).toMatchObject({ state: 'idle', queued: 0 });
      expect(
        reopened.model.requests.some((request) => request.messages.at(-1)?.content === 'after the repair'),
      ).toBe(true);
      // No side effect ran twice, before or after the fault.
      expect(new Set(witness.executed).size).toBe(witness.executed.length);
      expect(witness.executed.length).toBeGreaterThanOrEqual(executedBefore);
      expect(witness.errors.filter(isRawSqliteError)).toEqual([]);
    } finally {
      const closingAgain = reopened.runtime.close();
      await reopened.clock.runAll();
      await closingAgain;
    }
  });
});
