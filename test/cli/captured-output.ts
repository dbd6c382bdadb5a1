import type { CommandOutput } from '../../src/cli/terminal-style.js';

/** An output stream that keeps what was written; `isTTY` pretends to be a terminal. */
export interface CapturedOutput extends CommandOutput {
  readonly text: () => string;
  readonly lines: () => string[];
}

/** Capture a command's output in memory. */
export function captureOutput(options: { readonly isTTY?: boolean } = {}): CapturedOutput {
  let written = '';
  return {
    isTTY: options.isTTY ?? false,
    write(text: string) {
      written += text;
      return true;
    },
    text: () => written,
    lines: () => written.split('\n').filter((line) => line !== ''),
  };
}
