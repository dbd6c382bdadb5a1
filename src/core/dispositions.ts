/** What became of a message `send()` accepted or refused: the `disposition` of its `SendResult`. */
export const dispositions = [
  'started',
  'queued',
  'steered',
  'collected',
  'interrupted',
  'rejected',
  'duplicate',
] as const;

/** What `send()` did with one message. */
export type Disposition = (typeof dispositions)[number];
