import type { Session } from '../../runtime/session-handle.js';
import type { DemoCounts } from './demo-report.js';

/** Draws the live progress view: one line per active session, redrawn in place on a terminal. */
export interface DemoView {
  draw(sessions: readonly Session[], counts: DemoCounts, elapsedMs: number): void;
  /** Clear what the last draw left on screen. */
  done(): void;
}

/** A view for a terminal (redraws in place) or, when output is not a TTY, a summary line now and then. */
export function createDemoView(output: NodeJS.WriteStream): DemoView {
  let drawn = 0;
  let lastPlain = -1;
  return {
    draw(sessions, counts, elapsedMs) {
      const active = sessions.filter(
        (session) => session.status().state !== 'idle' || session.status().queued > 0,
      );
      const header = `t=${(elapsedMs / 1000).toFixed(1)}s  active ${active.length}  runs ${counts.runs}  tokens ${counts.tokens}`;
      if (!output.isTTY) {
        const second = Math.floor(elapsedMs / 1000);
        if (second !== lastPlain) output.write(`${header}\n`);
        lastPlain = second;
        return;
      }
      const lines = [header];
      for (const session of active) {
        const status = session.status();
        lines.push(
          `  ${session.key.padEnd(14)} ${status.state.padEnd(10)} ${(status.runId ?? '').padEnd(14)} queued ${status.queued}`,
        );
      }
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
