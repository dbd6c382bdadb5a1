import { isRuntimeError, RuntimeError } from '../../core/index.js';

/** Node socket errors that mean the server cannot be reached (or the connection went away). */
const socketCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/**
 * SQLSTATE classes of a connection or server problem rather than of the statement: 08 connection exception, 28
 * invalid authorization, 3D invalid catalog (no such database), 53 insufficient resources, 57 operator
 * intervention (shutdown, idle-in-transaction timeout), 58 system error.
 */
const serverClasses = new Set(['08', '28', '3D', '53', '57', '58']);

/** The connection string with its password (and any `password=` parameter) replaced, for messages. */
export function redactConnectionString(connectionString: string): string {
  let redacted = connectionString;
  try {
    const url = new URL(connectionString);
    if (url.password !== '') redacted = connectionString.replace(`:${url.password}@`, ':***@');
  } catch {
    // Not a URL (a key=value string): only the parameter below can carry a password.
  }
  return redacted.replace(/(password=)[^&\s]*/giu, '$1***');
}

/** True when `error` says the server or the connection failed, not the statement. */
export function isConnectionFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return socketCodes.has(code) || serverClasses.has(code.slice(0, 2));
  const message = (error as { message?: unknown }).message;
  return (
    typeof message === 'string' &&
    /connection terminated|connection timeout|timeout exceeded when trying to connect|not queryable|client has encountered a connection error/iu.test(
      message,
    )
  );
}

/** Remove every occurrence of `secret` from `text`. */
function scrub(text: string, secret: string | undefined): string {
  return secret === undefined || secret === '' ? text : text.split(secret).join('***');
}

/** The password a connection string carries, if any (so that no message can echo it). */
export function passwordOf(connectionString: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(connectionString).password);
    return password === '' ? undefined : password;
  } catch {
    return /password=([^&\s]*)/iu.exec(connectionString)?.[1];
  }
}

/**
 * What a failure of the Postgres ledger is for its callers: RuntimeErrors pass through; a connection failure is
 * `ledger_unavailable` naming the redacted connection string; a unique violation or a value Postgres cannot
 * hold (U+0000) is `invalid_input`. The original error is not kept as the cause of `ledger_unavailable` (its
 * fields could echo the configuration); its message is, with the password scrubbed.
 */
export function translatePostgresError(error: unknown, connectionString: string): Error {
  if (isRuntimeError(error)) return error;
  const password = passwordOf(connectionString);
  const message = scrub(error instanceof Error ? error.message : String(error), password);
  if (isConnectionFailure(error)) {
    const target = redactConnectionString(connectionString);
    return new RuntimeError(
      'ledger_unavailable',
      `the Postgres ledger at ${target} is unavailable: ${message}`,
      {
        details: { connectionString: target },
      },
    );
  }
  const code = (error as { code?: unknown }).code;
  if (code === '23505') {
    return new RuntimeError('invalid_input', `already recorded: ${message}`);
  }
  // AL001: a refusal a statement raised itself (`agentlanes_refuse`, see postgres/schema.ts), its message the reason.
  if (code === 'AL001') return new RuntimeError('invalid_input', message);
  // 22021: U+0000 in text; 22P05: \u0000 in JSONB. The runtime refuses both at the door; this is the backstop,
  // so a value Postgres cannot hold is the caller's error, never a `ledger_unavailable` a client would retry.
  if (code === '22021' || code === '22P05') {
    return new RuntimeError('invalid_input', `a value the ledger cannot store: ${message}`);
  }
  return error instanceof Error ? error : new Error(message);
}
