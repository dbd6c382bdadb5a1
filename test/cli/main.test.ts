import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryLedger, type Ledger } from 'agentlanes';
import { main, type MainIo } from '../../src/cli/main.js';
import { captureOutput } from './captured-output.js';

/** `main` with captured streams and an opener that hands out `ledger` and records what it was asked for. */
function setup(ledger: Ledger = createMemoryLedger()) {
  const output = captureOutput();
  const errors = captureOutput();
  const opened: string[] = [];
  let closed = 0;
  const io: MainIo = {
    output,
    errors,
    env: {},
    openLedger: (path) => {
      opened.push(path);
      return Promise.resolve({ ...ledger, close: () => Promise.resolve(void closed++) });
    },
  };
  return { output, errors, opened, closed: () => closed, run: (argv: string[]) => main(argv, io) };
}

describe('main', () => {
  it('opens ./agentlanes.db and closes it after listing sessions when no --db is given', async () => {
    const cli = setup();
    expect(await cli.run(['sessions'])).toBe(0);
    expect(cli.opened).toEqual(['./agentlanes.db']);
    expect(cli.closed()).toBe(1);
    expect(cli.output.text()).toBe('no sessions in the ledger\n');
  });

  it('opens the --db path and exits 1 when replay finds no events for the session', async () => {
    const cli = setup();
    expect(await cli.run(['replay', 'telegram:1', '--db', '/data/bot.db'])).toBe(1);
    expect(cli.opened).toEqual(['/data/bot.db']);
    expect(cli.closed()).toBe(1);
    expect(cli.errors.text()).toBe('agentlanes: no events for session "telegram:1"\n');
  });

  it('exits 1 with usage on stderr and opens nothing when a flag is unknown', async () => {
    const cli = setup();
    expect(await cli.run(['sessions', '--colour'])).toBe(1);
    expect(cli.opened).toEqual([]);
    expect(cli.errors.text()).toMatch(
      /^agentlanes: Unknown option '--colour'.*\nusage: agentlanes <command>/s,
    );
  });

  it('exits 1 with usage on stderr and opens nothing when replay has no session key', async () => {
    const cli = setup();
    expect(await cli.run(['replay', '--db', 'x.db'])).toBe(1);
    expect(cli.opened).toEqual([]);
    expect(cli.errors.text()).toMatch(/^agentlanes: replay needs a session key\nusage: /);
  });

  it('exits 1 with usage when sessions gets an argument it does not take', async () => {
    const cli = setup();
    expect(await cli.run(['sessions', 'telegram:1'])).toBe(1);
    expect(cli.errors.text()).toMatch(/^agentlanes: unexpected argument "telegram:1"\nusage: /);
  });

  it('names the path, exits 1 and creates no file when the database does not exist', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'agentlanes-cli-')), 'missing.db');
    const output = captureOutput();
    const errors = captureOutput();
    expect(await main(['sessions', '--db', path], { output, errors })).toBe(1);
    expect(errors.text()).toBe(
      `agentlanes: no ledger at ${path} (pass --db with the path of an agentlanes database)\n`,
    );
    expect(existsSync(path)).toBe(false);
  });

  it('lists the ledger commands in the help text when asked for help', async () => {
    const cli = setup();
    expect(await cli.run(['help'])).toBe(0);
    expect(cli.output.text()).toContain('  sessions  ');
    expect(cli.output.text()).toContain('  replay <sessionKey>  ');
    expect(cli.output.text()).toContain('--db PATH (./agentlanes.db)');
  });

  it('answers --help for each command with its own usage, exit 0 and no file opened', async () => {
    for (const command of ['demo', 'sessions', 'replay']) {
      const cli = setup();
      let demos = 0;
      const io = { output: cli.output, errors: cli.errors, runDemo: () => Promise.resolve(demos++) };
      expect(await main([command, '--help'], io)).toBe(0);
      const operands = command === 'replay' ? ' <sessionKey>' : '';
      expect(cli.output.text()).toMatch(
        new RegExp(`^usage: agentlanes ${command}${operands} \\[options\\]\n`),
      );
      expect(cli.errors.text()).toBe('');
      expect(demos).toBe(0);
    }
  });

  it('prints the version from package.json when asked for --version', async () => {
    const cli = setup();
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as {
      version: string;
    };
    expect(await cli.run(['--version'])).toBe(0);
    expect(cli.output.text()).toBe(`agentlanes ${version}\n`);
  });

  it('says the path is a directory when --db names a directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentlanes-cli-'));
    const errors = captureOutput();
    expect(await main(['sessions', '--db', dir], { output: captureOutput(), errors })).toBe(1);
    expect(errors.text()).toBe(
      `agentlanes: ${dir} is a directory, not a ledger file (pass --db with the path of an agentlanes database)\n`,
    );
  });

  it('names the path and says it is not SQLite when --db names a text file', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'agentlanes-cli-')), 'notes.txt');
    writeFileSync(path, 'hello');
    const errors = captureOutput();
    expect(await main(['replay', 'telegram:1', '--db', path], { output: captureOutput(), errors })).toBe(1);
    expect(errors.text()).toBe(`agentlanes: ${path} is not a SQLite database, so not an agentlanes ledger\n`);
    expect(readFileSync(path, 'utf8')).toBe('hello');
  });

  it('calls a SQLite file of another application foreign and advises no upgrade', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'agentlanes-cli-')), 'app.db');
    const other = new Database(path);
    other.exec('CREATE TABLE contacts (name TEXT)');
    other.close();
    const errors = captureOutput();
    expect(await main(['sessions', '--db', path], { output: captureOutput(), errors })).toBe(1);
    expect(errors.text()).toBe(
      `agentlanes: ${path} is a SQLite database of another application, not an agentlanes ledger\n`,
    );
    expect(errors.text()).not.toMatch(/upgrade/);
  });
});
