import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliCommand } from '../../src/cli/demo/run-demo.js';

describe('cliCommand (the replay hint the demo prints at its end)', () => {
  it('says npx agentlanes when the CLI runs from an installed package', () => {
    expect(cliCommand(join(process.cwd(), 'node_modules', 'agentlanes', 'dist', 'cli', 'bin.js'))).toBe(
      'npx agentlanes',
    );
  });

  it('says node and the script path when it runs in a clone of the repository (npm start), where npx cannot find it', () => {
    expect(cliCommand(join(process.cwd(), 'dist', 'cli', 'bin.js'))).toBe(
      `node ${join('dist', 'cli', 'bin.js')}`,
    );
  });

  it('quotes a path with a space', () => {
    expect(cliCommand(join(process.cwd(), 'my bots', 'bin.js'))).toBe(`node "${join('my bots', 'bin.js')}"`);
  });
});
