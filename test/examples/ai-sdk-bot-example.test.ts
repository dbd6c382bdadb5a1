import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const example = join(root, 'examples/ai-sdk-bot.ts');
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href;

/** Run the example to its end with no OpenAI key, so it starts its own loopback stand-in. */
function runExample(question: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    // The repository's tsconfig maps `agentlanes` to the sources, so the example runs without a build.
    TSX_TSCONFIG_PATH: join(root, 'tsconfig.json'),
  };
  for (const name of ['OPENAI_API_KEY', 'OPENAI_API_KEY_2', 'OPENAI_BASE_URL']) delete environment[name];
  const child = spawn(process.execPath, ['--import', tsx, example, question], {
    cwd: root,
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('examples/ai-sdk-bot.ts', () => {
  it(
    'answers through @ai-sdk/openai and its tool against the local stand-in, then exits 0',
    { timeout: 120_000 },
    async () => {
      const { code, stdout, stderr } = await runExample('where is my order A7?');
      expect({ code, lines: stdout.trim().split('\n') }, stderr).toEqual({
        code: 0,
        lines: [
          'tool order_status succeeded',
          'usage: 102 in, 20 out',
          'reply: Order A7 has shipped and arrives tomorrow.',
        ],
      });
    },
  );
});
