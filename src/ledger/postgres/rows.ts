import { RuntimeError } from '../../core/index.js';

/**
 * Run an INSERT whose duplicate key is the caller's mistake: a unique violation becomes `invalid_input` naming
 * `what` (the savepoint of the write rolls back whatever else it wrote).
 */
export async function refuseDuplicate<T>(what: string, insert: Promise<T>): Promise<T> {
  try {
    return await insert;
  } catch (error) {
    if ((error as { code?: unknown }).code === '23505') {
      throw new RuntimeError('invalid_input', `${what} is already recorded`, { cause: error });
    }
    throw error;
  }
}

/** The named parameters of a row object as positional values, in `columns` order. */
export function valuesOf<Row extends Record<string, unknown>>(
  row: Row,
  columns: readonly (keyof Row)[],
): unknown[] {
  return columns.map((column) => row[column]);
}

/** `$1, $2, …` for `count` parameters. */
export function placeholders(count: number): string {
  return Array.from({ length: count }, (_, index) => `$${index + 1}`).join(', ');
}

/** An INSERT of `columns` into `table`, one parameter per column in order. */
export function insertSql(table: string, columns: readonly string[]): string {
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${placeholders(columns.length)})`;
}
