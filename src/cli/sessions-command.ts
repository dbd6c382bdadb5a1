import type { Ledger } from '../ledger/index.js';
import { listSessionRows, type SessionRow } from './session-rows.js';
import { createTerminalStyle, wantsColor, type CommandIo, type TerminalStyle } from './terminal-style.js';

const headers = ['key', 'state', 'runs', 'queued', 'last activity'] as const;
/** Columns holding counts are right-aligned. */
const numeric = new Set([2, 3]);

/**
 * Times before this one (2001-09-09) come from a simulated clock that started near zero (the demo's, a test's
 * fake clock), not from a wall clock: shown as the simulated time elapsed, not as a date in 1970.
 */
const wallClockSince = 1_000_000_000_000;

/** A last-activity time as a date, or as simulated elapsed seconds when a simulated clock wrote it. */
export function formatActivityTime(at: number | undefined): string {
  if (at === undefined) return '-';
  if (at < wallClockSince) return `simulated +${(at / 1000).toFixed(3)}s`;
  return new Date(at).toISOString();
}

function cells(row: SessionRow): string[] {
  const lastActivity = formatActivityTime(row.lastActivity);
  return [row.key, row.state, String(row.runs), String(row.queued), lastActivity];
}

function stateTone(state: SessionRow['state'], style: TerminalStyle): (text: string) => string {
  switch (state) {
    case 'running':
      return style.green;
    case 'queued':
      return style.yellow;
    case 'idle':
      return style.dim;
  }
}

/** The sessions as an aligned table with a header line; colour only marks the header and the states. */
export function formatSessionsTable(
  rows: readonly SessionRow[],
  options: { readonly color: boolean },
): string[] {
  const style = createTerminalStyle(options.color);
  const table = [[...headers], ...rows.map(cells)];
  const widths = headers.map((_, column) => Math.max(...table.map((line) => (line[column] ?? '').length)));
  const layout = (line: readonly string[]): string[] =>
    line.map((cell, column) => {
      const width = widths[column] ?? 0;
      return numeric.has(column) ? cell.padStart(width) : cell.padEnd(width);
    });
  const [header = [], ...body] = table.map(layout);
  return [
    style.bold(header.join('  ').trimEnd()),
    ...body.map((line, index) => {
      const row = rows[index] as SessionRow;
      const painted = line.map((cell, column) => (column === 1 ? stateTone(row.state, style)(cell) : cell));
      return painted.join('  ').trimEnd();
    }),
  ];
}

/** `agentlanes sessions`: print every session in the ledger, newest activity first; resolves the exit code. */
export async function runSessionsCommand(ledger: Ledger, io: CommandIo = {}): Promise<number> {
  const output = io.output ?? process.stdout;
  const rows = await listSessionRows(ledger);
  if (rows.length === 0) {
    output.write('no sessions in the ledger\n');
    return 0;
  }
  const lines = formatSessionsTable(rows, { color: wantsColor(output, io.env) });
  output.write(`${lines.join('\n')}\n`);
  return 0;
}
