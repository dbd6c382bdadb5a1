import { describe, expect, it } from 'vitest';
import { describeEvent } from '../../src/cli/describe-event.js';

describe('describeEvent of message.received', () => {
  it("names the sender's role, as replay and the dashboard's session view show it", () => {
    const description = describeEvent({
      type: 'message.received',
      sessionKey: 'telegram:-1',
      seq: 1,
      cursor: 1,
      at: 0,
      messageId: 'm1',
      text: 'refund me',
      mode: 'collect',
      disposition: 'collected',
      senderId: 'gus',
      senderName: 'Gus',
      senderRole: 'guest',
    });
    expect(description.details).toContain('from gus');
    expect(description.details).toContain('as guest');
  });
});
