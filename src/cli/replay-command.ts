import type { Ledger } from '../ledger/index.js';
import { createTimelineRenderer } from './render-timeline.js';
import { inheritedLines } from './replay-fork.js';
import { eventPageSize } from './session-rows.js';
import { createTerminalStyle, wantsColor, type CommandIo } from './terminal-style.js';

/** Where one session's timeline goes: its lines, indented by `indent` (a subagent's under its parent's call). */
interface ReplayTarget {
  readonly ledger: Ledger;
  readonly color: boolean;
  readonly write: (lines: readonly string[], indent: string) => void;
}

/** How far a subagent's timeline is indented under the call that spawned it. */
const childIndent = '    ';

/**
 * Write a session's timeline a page at a time; after each `subagent.spawned`, the child session's own timeline,
 * indented under it (recursively). Returns how many events and inherited turns it wrote.
 */
async function replaySession(target: ReplayTarget, sessionKey: string, indent: string): Promise<number> {
  const { ledger, color, write } = target;
  const renderer = createTimelineRenderer({ color });
  const inherited = await inheritedLines(ledger, sessionKey, createTerminalStyle(color));
  write(inherited, indent);
  let after = 0;
  let seen = inherited.length;
  for (;;) {
    const page = await ledger.readEvents({ sessionKey, after, limit: eventPageSize });
    seen += page.length;
    for (const event of page) {
      write(renderer.push([event]), indent);
      if (event.type === 'subagent.spawned')
        await replaySession(target, event.childKey, indent + childIndent);
    }
    const last = page[page.length - 1];
    if (last === undefined || page.length < eventPageSize) break;
    after = last.cursor;
  }
  write(renderer.end(), indent);
  return seen;
}

/**
 * `agentlanes replay <sessionKey>`: print the session's recorded events as a timeline, read and written a page
 * at a time (a fork's inherited turns first, subagents' runs indented under the call that spawned them); resolves
 * 1 when the ledger holds no events for the session.
 */
export async function runReplayCommand(
  ledger: Ledger,
  sessionKey: string,
  io: CommandIo = {},
): Promise<number> {
  const output = io.output ?? process.stdout;
  const write = (lines: readonly string[], indent: string): void => {
    if (lines.length > 0) output.write(`${lines.map((line) => indent + line).join('\n')}\n`);
  };
  const seen = await replaySession({ ledger, color: wantsColor(output, io.env), write }, sessionKey, '');
  if (seen === 0) {
    (io.errors ?? process.stderr).write(`agentlanes: no events for session "${sessionKey}"\n`);
    return 1;
  }
  return 0;
}
