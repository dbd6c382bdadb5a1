import type { Ledger } from '../ledger/index.js';
import { createTimelineRenderer } from './render-timeline.js';
import { eventPageSize } from './session-rows.js';
import { wantsColor, type CommandIo } from './terminal-style.js';

/**
 * `agentlanes replay <sessionKey>`: print the session's recorded events as a timeline, read and written a page
 * at a time; resolves 1 when the ledger holds no events for the session.
 */
export async function runReplayCommand(
  ledger: Ledger,
  sessionKey: string,
  io: CommandIo = {},
): Promise<number> {
  const output = io.output ?? process.stdout;
  const renderer = createTimelineRenderer({ color: wantsColor(output, io.env) });
  let after = 0;
  let seen = 0;
  for (;;) {
    const page = await ledger.readEvents({ sessionKey, after, limit: eventPageSize });
    seen += page.length;
    const lines = renderer.push(page);
    if (lines.length > 0) output.write(`${lines.join('\n')}\n`);
    const last = page[page.length - 1];
    if (last === undefined || page.length < eventPageSize) break;
    after = last.cursor;
  }
  if (seen === 0) {
    (io.errors ?? process.stderr).write(`agentlanes: no events for session "${sessionKey}"\n`);
    return 1;
  }
  const rest = renderer.end();
  if (rest.length > 0) output.write(`${rest.join('\n')}\n`);
  return 0;
}
