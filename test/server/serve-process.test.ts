import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSqliteLedger } from 'agentlanes';
import { tempLedgerPath } from '../support/temp-ledger.js';
import { sseMessages } from './server-harness.js';

const root = join(import.meta.dirname, '..', '..');
const token = 'serve-token-0123456789';

/** A config module as a user writes one: runtime options by default export, tools and a scripted model. */
function writeConfig(directory: string, ledgerPath: string): string {
  const path = join(directory, 'agentlanes.config.ts');
  const source = join(root, 'src');
  writeFileSync(
    path,
    [
      `import type { RuntimeOptions } from '${source}/index.ts';`,
      `import { scriptedModel } from '${source}/testing/index.ts';`,
      `const options: RuntimeOptions = {`,
      `  ledger: { path: ${JSON.stringify(ledgerPath)} },`,
      `  providers: { scripted: scriptedModel([{ text: 'served answer' }]) },`,
      `  model: { provider: 'scripted', model: 'm' },`,
      `};`,
      `export default options;`,
    ].join('\n'),
  );
  return path;
}

describe('agentlanes serve', () => {
  it('serves the config module over HTTP and, on SIGTERM, ends open streams and closes the runtime', async () => {
    const ledgerPath = tempLedgerPath('serve');
    const config = writeConfig(dirname(ledgerPath), ledgerPath);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/bin.ts', 'serve', '--config', config, '--port', '0'],
      { cwd: root, env: { ...process.env, AGENTLANES_TOKENS: token }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const found = /serving on (http:\/\/\S+)/.exec(stdout);
        if (found?.[1] !== undefined) resolve(found[1]);
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    expect((await fetch(`${url}/v1/sessions/web:1`)).status).toBe(401);
    const sent = await fetch(`${url}/v1/sessions/web:1/messages`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ id: 'm-1', text: 'hello' }),
    });
    expect(sent.status).toBe(202);
    const stream = sseMessages(await fetch(`${url}/v1/sessions/web:1/events`, { headers }));
    let last = await stream.next();
    while (last.done !== true && !last.value.data.includes('"run.ended"')) last = await stream.next();

    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    last = await stream.next();
    expect(last.value).toMatchObject({ event: 'close', data: '{"reason":"shutdown"}' });
    const [code] = (await exited) as [number | null];
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('agentlanes: SIGTERM: closing\nagentlanes: closed\n');

    // The runtime closed the ledger: another process may open it, and it holds the served run.
    const ledger = createSqliteLedger({ path: ledgerPath, readonly: true });
    expect(await ledger.listRuns('web:1')).toMatchObject([{ status: 'completed', text: 'served answer' }]);
    await ledger.close();
  });
});
