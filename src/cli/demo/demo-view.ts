import type { Session } from '../../runtime/index.js';
import type { CommandOutput } from '../terminal-style.js';
import type { DemoCounts } from './demo-report.js';
import type { DemoTicker } from './demo-ticker.js';

/** The live view fits a classic terminal: no line wider, no frame taller. */
export const viewWidth = 80;
/** At most this many lines per frame (one row of a 24-row terminal stays for the cursor). */
export const viewHeight = 23;
/** Session rows shown at most; the rest are summed up in one line. */
const sessionRows = 10;

/** What one frame of the live view shows. */
export interface DemoFrame {
  readonly sessions: readonly Session[];
  readonly counts: DemoCounts;
  readonly elapsedMs: number;
  readonly ticker: DemoTicker;
}

/** Draws the live progress view, redrawn in place on a terminal. */
export interface DemoView {
  draw(frame: DemoFrame): void;
  /** Clear what the last draw left on screen. */
  done(): void;
}

/** The header line: simulated time and the running totals. */
export function headerLine(frame: DemoFrame, active: number): string {
  const { counts } = frame;
  return (
    `t=${(frame.elapsedMs / 1000).toFixed(1)}s  active ${active}/${frame.sessions.length}  runs ${counts.runs}  ` +
    `steered ${counts.steered}  tokens ${counts.tokens}`
  );
}

function fit(line: string, width: number): string {
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/** The lines of one frame: header, the busiest sessions, then the latest notable moments. */
export function frameLines(frame: DemoFrame, width = viewWidth): string[] {
  const active = frame.sessions.filter(
    (session) => session.status().state !== 'idle' || session.status().queued > 0,
  );
  const lines = [headerLine(frame, active.length)];
  for (const session of active.slice(0, sessionRows)) {
    const status = session.status();
    lines.push(
      `  ${session.key.replace(/^demo:/, '').padEnd(8)} ${status.state.padEnd(17)} ` +
        `${(status.runId ?? '').padEnd(10)} queued ${status.queued}`,
    );
  }
  if (active.length > sessionRows) lines.push(`  … and ${active.length - sessionRows} more`);
  lines.push('  latest:');
  for (const moment of frame.ticker.recent(viewHeight - lines.length)) lines.push(`  ${moment}`);
  return lines.slice(0, viewHeight).map((line) => fit(line, Math.min(width, viewWidth)));
}

/** The running totals at the start of simulated second `second`, for a log that is not a terminal. */
export function progressLine(counts: DemoCounts, second: number): string {
  return `t=${second}s  runs ${counts.runs}  steered ${counts.steered}  tokens ${counts.tokens}`;
}

/**
 * A view that redraws in place on a terminal. Off a terminal it draws nothing: the demo logs progress lines and
 * notable moments from the event stream instead.
 */
export function createDemoView(output: CommandOutput & { readonly columns?: number }): DemoView {
  let drawn = 0;
  return {
    draw(frame) {
      if (output.isTTY !== true) return;
      const lines = frameLines(frame, output.columns ?? viewWidth);
      if (drawn > 0) output.write(`\x1b[${drawn}A`);
      output.write(lines.map((line) => `\x1b[2K${line}\n`).join(''));
      for (let extra = lines.length; extra < drawn; extra++) output.write('\x1b[2K\n');
      if (drawn > lines.length) output.write(`\x1b[${drawn - lines.length}A`);
      drawn = lines.length;
    },
    done() {
      drawn = 0;
    },
  };
}
