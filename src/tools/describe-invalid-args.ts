import type { z } from 'zod';

/** The message for arguments that do not match a tool's schema: each issue with its path. */
export function describeInvalidArgs(name: string, error: z.ZodError): string {
  const issues = error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  return `invalid arguments for "${name}": ${issues.join('; ')}`;
}
