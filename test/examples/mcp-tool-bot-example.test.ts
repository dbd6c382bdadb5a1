import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const example = join(root, 'examples/mcp-tool-bot.ts');
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href;

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** Run the example to its end from a temporary folder: it starts its stdio stand-in server from there. */
function runExample(...asks: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const folder = mkdtempSync(join(tmpdir(), 'agentlanes-mcp-example-'));
  folders.push(folder);
  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    // The repository's tsconfig maps `agentlanes` to the sources, so the example runs without a build.
    TSX_TSCONFIG_PATH: join(root, 'tsconfig.json'),
  };
  delete environment['MCP_SERVER_URL'];
  const child = spawn(process.execPath, ['--import', tsx, example, ...asks], {
    cwd: folder,
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('examples/mcp-tool-bot.ts', () => {
  it(
    'reads through the MCP stand-in at once, deletes only after approval, then exits 0',
    { timeout: 120_000 },
    async () => {
      const { code, stdout, stderr } = await runExample('read todo.md', 'delete shopping.md', 'list');
      expect({ code, lines: stdout.trim().split('\n') }, stderr).toEqual({
        code: 0,
        lines: [
          'reply: notes_read_note says: Buy milk. Call the plumber.',
          'approval needed: notes_delete_note',
          'reply: notes_delete_note says: deleted shopping.md',
          'reply: notes_list_notes says: todo.md',
        ],
      });
      expect(stderr).toBe('');
    },
  );
});
