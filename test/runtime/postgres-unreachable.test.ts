import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createRuntime, isRuntimeError } from 'agentlanes';
import { scriptedModel } from 'agentlanes/testing';

/** A loopback port nobody listens on: opened, then closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

describe('a runtime whose Postgres database cannot be reached at start', () => {
  it('reports ledger_unavailable once, without the password, and rejects calls with it; close() resolves', async () => {
    const port = await closedPort();
    const reported: unknown[] = [];
    const runtime = createRuntime({
      ledger: { postgres: { connectionString: `postgres://bot:s3cret-pw@127.0.0.1:${port}/test` } },
      cluster: false,
      providers: { scripted: scriptedModel([{ text: 'never' }]) },
      model: { provider: 'scripted', model: 'm' },
      onError: (error) => reported.push(error),
    });
    const refused = await runtime
      .session('web:1')
      .send({ id: 'm1', text: 'hello' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isRuntimeError(refused, 'ledger_unavailable')).toBe(true);
    expect(String((refused as Error).message)).not.toContain('s3cret-pw');
    expect(reported.filter((error) => isRuntimeError(error, 'ledger_unavailable'))).toHaveLength(1);
    expect(reported.map(String).join('\n')).not.toContain('s3cret-pw');
    await runtime.close();
  });
});
