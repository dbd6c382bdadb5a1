import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runDemo } from '../../src/cli/demo/run-demo.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('runDemo', () => {
  // The demo runs on the real clock by design (it is a live show); a few users keep it to about 3 s.
  it('loses no message and has the simulated operator approve the refund', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentlanes-demo-'));
    dirs.push(dir);
    let text = '';
    const output = { isTTY: false, write: (chunk: string) => ((text += chunk), true) };
    const lost = await runDemo({
      users: 5,
      seed: 7,
      tokenDelayMs: 2,
      path: join(dir, 'demo.db'),
      output: output as unknown as NodeJS.WriteStream,
    });
    expect(lost).toBe(0);
    expect(text).toMatch(/\| approvals requested +\| +1 \|/);
    expect(text).toMatch(/\| approved by operator +\| +1 \|/);
    expect(text).toMatch(/\| lost +\| +0 \|/);
  }, 30_000);
});
