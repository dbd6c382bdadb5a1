import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteLedger } from 'agentlanes';
import { defaultDemoPath, runDemo } from '../../src/cli/demo/run-demo.js';
import { captureOutput } from './captured-output.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentlanes-demo-'));
  dirs.push(dir);
  return dir;
}

/** Run the demo (simulated clock, no real-time pacing) and return its exit figure and output. */
async function demo(path: string, options: { users?: number; seed?: number; isTTY?: boolean } = {}) {
  const output = captureOutput({ isTTY: options.isTTY ?? false });
  const lost = await runDemo({
    users: options.users ?? 9,
    seed: options.seed ?? 7,
    tokenDelayMs: 10,
    path,
    output,
    realTime: false,
  });
  return { lost, text: output.text() };
}

// eslint-disable-next-line no-control-regex
const ansi = /\x1b\[[0-9;]*[A-Za-z]/g;

describe('runDemo', () => {
  it('loses no message and has the simulated operator approve the refund when run with 9 users', async () => {
    const { lost, text } = await demo(join(tempDir(), 'demo.db'));
    expect(lost).toBe(0);
    expect(text).toMatch(/\| approvals requested +\| +1 \|/);
    expect(text).toMatch(/\| approved by operator +\| +1 \|/);
    expect(text).toMatch(/\| lost +\| +0 \|/);
  });

  it('prints the same lines when run twice with the same seed', async () => {
    const path = join(tempDir(), 'demo.db');
    const first = await demo(path, { seed: 11 });
    const second = await demo(path, { seed: 11 });
    expect(second.text).toBe(first.text);
    expect(first.text).toContain('steered "actually, answer in metric units"');
  });

  it('answers a steered run with the steer text when a user steers mid-stream', async () => {
    const path = join(tempDir(), 'demo.db');
    await demo(path);
    const ledger = createSqliteLedger({ path, readonly: true });
    const texts = (await ledger.listRuns('demo:user-06')).map((run) => run.text);
    await ledger.close();
    expect(texts.join('\n')).toContain('Got it, answer in metric units');
  });

  it('draws frames of at most 24 lines and 80 columns when the output is a terminal', async () => {
    const { lost, text } = await demo(join(tempDir(), 'demo.db'), { users: 24, isTTY: true });
    expect(lost).toBe(0);
    const live = text.slice(0, text.indexOf('\n+---'));
    // eslint-disable-next-line no-control-regex
    const frames = live.split(/\x1b\[\d+A/).filter((frame) => frame.includes('t='));
    expect(frames.length).toBeGreaterThan(10);
    const lines = frames.flatMap((frame) => frame.replace(ansi, '').split('\n'));
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(80);
    expect(Math.max(...frames.map((frame) => frame.split('\n').length - 1))).toBeLessThanOrEqual(24);
    expect(live).toMatch(/steered "actually/);
    expect(live).toMatch(/approval needed: refund_order/);
    expect(live).toMatch(/rotated to demo-key-2/);
    expect(live).toMatch(/run interrupted/);
  });

  it('refuses to replace a file that is not an agentlanes ledger and leaves it as it was', async () => {
    const dir = tempDir();
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'my notes');
    await expect(demo(text)).rejects.toMatchObject({ code: 'ledger_foreign', details: { path: text } });
    expect(readFileSync(text, 'utf8')).toBe('my notes');
    const foreign = join(dir, 'other-app.db');
    const other = new Database(foreign);
    other.exec("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('ada')");
    other.close();
    await expect(demo(foreign)).rejects.toMatchObject({ code: 'ledger_foreign' });
    const reopened = new Database(foreign, { readonly: true });
    expect(reopened.prepare('SELECT name FROM contacts').all()).toEqual([{ name: 'ada' }]);
    reopened.close();
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    await expect(demo(folder)).rejects.toMatchObject({
      code: 'ledger_unavailable',
      message: expect.stringContaining('is a directory') as string,
    });
  });

  it('refuses a ledger another runtime holds open and leaves its records when the demo starts', async () => {
    const path = join(tempDir(), 'busy.db');
    const holder = createSqliteLedger({ path });
    try {
      await expect(demo(path)).rejects.toMatchObject({ code: 'ledger_locked', details: { path } });
      // Nothing was deleted under the holder's feet.
      expect(existsSync(path) && existsSync(`${path}-lock`)).toBe(true);
    } finally {
      await holder.close();
    }
  });
});

describe('defaultDemoPath', () => {
  it("names a file for the user in the user's temp folder when no --db is given", () => {
    expect(defaultDemoPath()).toBe(join(tmpdir(), `agentlanes-demo-${userInfo().username}.db`));
  });
});
