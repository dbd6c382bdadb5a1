import type { Ledger } from '../ledger/index.js';
import { quote } from './describe-event.js';
import type { TerminalStyle } from './terminal-style.js';

/**
 * The lines `replay` prints before a forked session's own events: where it was forked from, then each turn it
 * inherited (session, run, role, text), oldest first. None for a session that is not a fork.
 */
export async function inheritedLines(
  ledger: Ledger,
  sessionKey: string,
  style: TerminalStyle,
): Promise<string[]> {
  const fork = await ledger.getFork(sessionKey);
  if (fork === undefined) return [];
  const inherited = (await ledger.listTurns(sessionKey)).slice(0, fork.turns);
  const after = fork.upToRunId === undefined ? '' : ` after ${fork.upToRunId}`;
  const header = `  ${style.bold(`forked from ${fork.parentKey}${after}`)}  ${style.dim(`${fork.turns} turns inherited`)}`;
  return [
    header,
    ...inherited.map(
      (turn) =>
        `  ${style.dim('inherited')}  ${style.dim(`${turn.sessionKey}  ${turn.runId}`)}  ${turn.role.padEnd(9)}  ${quote(turn.content)}`,
    ),
  ];
}
