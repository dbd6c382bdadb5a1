import type { Clock } from '../../core/index.js';
import type { Random } from '../../core/index.js';
import type { Runtime } from '../../runtime/index.js';
import type { SendResult } from '../../actors/index.js';
import type { Session } from '../../runtime/index.js';

/** How a simulated chat user behaves. */
export type Persona = 'burst' | 'steerer' | 'interrupter' | 'stopper' | 'waiter' | 'refunder';

/** What the simulated channel did, for the closing table and the no-loss check. */
export interface ChannelLog {
  readonly accepted: Map<string, string[]>;
  sent: number;
  duplicates: number;
  rejected: number;
  stops: number;
  waits: string[];
}

const questions = [
  'hi! where is my parcel?',
  'can you check order #4411 for me',
  'also, can I change the delivery address?',
  'and what about the invoice',
  'one more thing: do you ship to Norway?',
];

/**
 * The persona of user `index` (0-based): one interrupter, one stopper, one waiter, one refunder (a high-risk tool
 * call an operator approves), five steerers, the rest burst.
 */
export function personaOf(index: number): Persona {
  if (index === 0) return 'interrupter';
  if (index === 1) return 'stopper';
  if (index === 2) return 'waiter';
  if (index === 3) return 'refunder';
  if (index < 9) return 'steerer';
  return 'burst';
}

async function until(clock: Clock, check: () => boolean, stepMs = 20, limitMs = 10_000): Promise<boolean> {
  for (let waited = 0; waited < limitMs; waited += stepMs) {
    if (check()) return true;
    await clock.sleep(stepMs);
  }
  return false;
}

/** Sends a user's messages and logs what the channel answered. */
type Send = (text: string, mode?: 'steer' | 'interrupt', id?: string) => Promise<SendResult>;

function createSend(chat: Session, log: ChannelLog): Send {
  let counter = 0;
  return async (text, mode, id) => {
    const messageId = id ?? `${chat.key}/m${++counter}`;
    log.sent++;
    const result = await chat.send(
      { id: messageId, text, sender: { id: chat.key } },
      mode === undefined ? {} : { mode },
    );
    if (result.disposition === 'duplicate') log.duplicates++;
    else if (result.disposition === 'rejected') log.rejected++;
    else log.accepted.set(chat.key, [...(log.accepted.get(chat.key) ?? []), result.messageId]);
    return result;
  };
}

/** What user `index` does after its first message, following its persona. */
async function followPersona(
  chat: Session,
  index: number,
  send: Send,
  options: { clock: Clock; random: Random; log: ChannelLog },
): Promise<void> {
  const { clock, random, log } = options;
  switch (personaOf(index)) {
    case 'burst': {
      const extra = 1 + Math.floor(random() * 3);
      for (let burst = 0; burst < extra; burst++) {
        await clock.sleep(80 + Math.floor(random() * 150));
        await send(questions[(index + burst + 1) % questions.length] as string);
      }
      // Chat platforms redeliver: the same id again must be answered `duplicate`.
      if (index % 4 === 0) await send('hi! where is my parcel?', undefined, `${chat.key}/m1`);
      break;
    }
    case 'steerer':
      if (await until(clock, () => chat.status().state === 'streaming'))
        await send('actually, answer in metric units', 'steer');
      break;
    case 'interrupter':
      await until(clock, () => chat.status().state === 'streaming');
      await send('wait, forget that: cancel my order instead', 'interrupt');
      break;
    case 'stopper':
      await until(clock, () => chat.status().state === 'streaming');
      await clock.sleep(150);
      if (await chat.abort({ reason: 'user sent /stop' })) log.stops++;
      break;
    case 'refunder':
      // The run pauses for the operator (see runDemo); this user just waits for the answer.
      break;
    case 'waiter': {
      const result = await chat.waitForEnd({ timeoutMs: 15_000 });
      log.waits.push(
        `${chat.key} waitForEnd -> ${result.status}${result.status === 'ended' ? ` (${result.run.status})` : ''}`,
      );
      break;
    }
  }
}

/** Simulate one user of the channel, following its persona. */
export async function simulateUser(
  runtime: Runtime,
  index: number,
  options: { clock: Clock; random: Random; log: ChannelLog },
): Promise<void> {
  const chat: Session = runtime.session(`demo:user-${String(index + 1).padStart(2, '0')}`);
  const send = createSend(chat, options.log);
  await options.clock.sleep(Math.floor(options.random() * 1500));
  await send(
    personaOf(index) === 'refunder'
      ? 'please refund order #7001'
      : (questions[index % questions.length] as string),
  );
  await followPersona(chat, index, send, options);
}
