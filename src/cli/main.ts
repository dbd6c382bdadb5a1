import { parseArgs } from 'node:util';
import { RuntimeError, isRuntimeError } from '../core/errors.js';
import { runDemo } from './demo/run-demo.js';

const usage = `usage: agentlanes <command> [options]

commands:
  demo    a simulated chat channel on the scripted model, with a live view and a closing table
          --users N (24)  --seed N (7)  --token-delay MS (25)
`;

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new RuntimeError('invalid_input', `--${name} must be a whole number`);
  return parsed;
}

/** Run the CLI with `argv` (without node and the script); resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'demo': {
        const { values } = parseArgs({
          args: [...rest],
          options: { users: { type: 'string' }, seed: { type: 'string' }, 'token-delay': { type: 'string' } },
          strict: true,
        });
        const users = positiveInt('users', values.users, 24);
        if (users < 1) throw new RuntimeError('invalid_input', '--users must be at least 1');
        const lost = await runDemo({
          users,
          seed: positiveInt('seed', values.seed, 7),
          tokenDelayMs: positiveInt('token-delay', values['token-delay'], 25),
          output: process.stdout,
        });
        return lost === 0 ? 0 : 1;
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(usage);
        return command === undefined ? 1 : 0;
      default:
        process.stderr.write(`agentlanes: unknown command "${command}"\n${usage}`);
        return 1;
    }
  } catch (error) {
    const message = isRuntimeError(error) || error instanceof TypeError ? error.message : String(error);
    process.stderr.write(`agentlanes: ${message}\n`);
    return 1;
  }
}
