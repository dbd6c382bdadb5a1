import { isRuntimeError, type RuntimeError } from '../../core/index.js';

/** Listeners told once about each corrupt row a ledger skipped (see `Ledger.onCorruptRow`). */
export interface CorruptRowLog {
  /** Tell the listeners about a skipped row, unless this row was reported before. */
  report(error: RuntimeError): void;
  /** Add a listener; returns the function that removes it. */
  listen(listener: (error: RuntimeError) => void): () => void;
  /** Convert each row, skipping (and reporting) those that fail validation with `ledger_corrupt`. */
  readEach<Row, Record>(rows: readonly Row[], convert: (row: Row) => Record): Record[];
  /** Convert every row; the first that fails with `ledger_corrupt` is reported and thrown (a read that cannot skip it). */
  readAll<Row, Record>(rows: readonly Row[], convert: (row: Row) => Record): Record[];
}

/** Create the log of one ledger. Rows are told apart by `details.table` and `details.row`. */
export function createCorruptRowLog(): CorruptRowLog {
  const listeners = new Set<(error: RuntimeError) => void>();
  const reported = new Set<string>();
  const report = (error: RuntimeError): void => {
    const key = `${String(error.details?.table)}\u0000${String(error.details?.row)}`;
    if (reported.has(key)) return;
    reported.add(key);
    for (const listener of listeners) listener(error);
  };
  return {
    report,
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    readEach(rows, convert) {
      const records = [];
      for (const row of rows) {
        try {
          records.push(convert(row));
        } catch (error) {
          if (!isRuntimeError(error, 'ledger_corrupt')) throw error;
          report(error);
        }
      }
      return records;
    },
    readAll(rows, convert) {
      return rows.map((row) => {
        try {
          return convert(row);
        } catch (error) {
          if (isRuntimeError(error, 'ledger_corrupt')) report(error);
          throw error;
        }
      });
    },
  };
}
