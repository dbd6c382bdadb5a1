/** Where a command writes its output: anything with `write`, possibly a terminal. */
export interface CommandOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

/** Where a command writes and which environment decides colour. */
export interface CommandIo {
  /** @default process.stdout */
  readonly output?: CommandOutput;
  /** @default process.stderr */
  readonly errors?: CommandOutput;
  /** @default process.env */
  readonly env?: NodeJS.ProcessEnv;
}

/** ANSI colours for terminal output; with colour off every function returns its text unchanged. */
export interface TerminalStyle {
  readonly bold: (text: string) => string;
  readonly dim: (text: string) => string;
  readonly red: (text: string) => string;
  readonly green: (text: string) => string;
  readonly yellow: (text: string) => string;
  readonly blue: (text: string) => string;
  readonly magenta: (text: string) => string;
  readonly cyan: (text: string) => string;
}

const codes = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
} as const satisfies Record<keyof TerminalStyle, readonly [number, number]>;

/** Build the style functions, colouring with ANSI codes only when `color` is true. */
export function createTerminalStyle(color: boolean): TerminalStyle {
  const paint =
    ([open, close]: readonly [number, number]) =>
    (text: string) =>
      color ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    bold: paint(codes.bold),
    dim: paint(codes.dim),
    red: paint(codes.red),
    green: paint(codes.green),
    yellow: paint(codes.yellow),
    blue: paint(codes.blue),
    magenta: paint(codes.magenta),
    cyan: paint(codes.cyan),
  };
}

/** Colour only on a terminal, and never when `NO_COLOR` is set to a non-empty value (no-color.org). */
export function wantsColor(output: CommandOutput, env: NodeJS.ProcessEnv = process.env): boolean {
  const noColor = env.NO_COLOR;
  return output.isTTY === true && (noColor === undefined || noColor === '');
}
