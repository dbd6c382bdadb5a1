import { z } from 'zod';
import { RuntimeError } from '../core/index.js';
import type { DeliveryInDoubt } from './session-handle.js';

const deliveryInDoubtSchema = z
  .object({
    consumer: z.string().min(1).max(200),
    runId: z.string().min(1),
    blockIndex: z.int().min(-1),
    reason: z.string().min(1).max(500),
  })
  .strict();

/** Check a `reportDeliveryInDoubt` input: `invalid_input` naming the field, nothing emitted. */
export function parseDeliveryInDoubt(input: unknown): DeliveryInDoubt {
  const parsed = deliveryInDoubtSchema.safeParse(input);
  if (!parsed.success) {
    throw new RuntimeError('invalid_input', `reportDeliveryInDoubt: ${z.prettifyError(parsed.error)}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}
