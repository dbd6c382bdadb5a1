import { describe, expect, it } from 'vitest';
import { isIdempotentMcpTool, mcpToolName, riskOfMcpTool } from 'agentlanes/mcp';

const settings = { overrides: {}, unannotated: 'high' as const };

describe('riskOfMcpTool', () => {
  it('reads destructive as high and read-only or non-destructive as low', () => {
    expect(riskOfMcpTool('rm', { destructiveHint: true }, settings)).toBe('high');
    expect(riskOfMcpTool('cat', { readOnlyHint: true }, settings)).toBe('low');
    expect(riskOfMcpTool('append', { destructiveHint: false }, settings)).toBe('low');
  });

  it('trusts the safer reading when a server claims read-only and destructive at once', () => {
    expect(riskOfMcpTool('odd', { readOnlyHint: true, destructiveHint: true }, settings)).toBe('high');
  });

  it('gives an unannotated tool the unannotated risk', () => {
    expect(riskOfMcpTool('x', undefined, settings)).toBe('high');
    expect(riskOfMcpTool('x', {}, { overrides: {}, unannotated: 'low' })).toBe('low');
  });

  it('lets an override by the server tool name win over the annotations', () => {
    const overrides = { rm: 'low', cat: 'high' } as const;
    expect(riskOfMcpTool('rm', { destructiveHint: true }, { overrides, unannotated: 'high' })).toBe('low');
    expect(riskOfMcpTool('cat', { readOnlyHint: true }, { overrides, unannotated: 'high' })).toBe('high');
    // An inherited key is not an override.
    expect(riskOfMcpTool('toString', { readOnlyHint: true }, { overrides, unannotated: 'high' })).toBe('low');
  });
});

describe('isIdempotentMcpTool', () => {
  it('marks read-only and idempotent tools, nothing else', () => {
    expect(isIdempotentMcpTool({ readOnlyHint: true })).toBe(true);
    expect(isIdempotentMcpTool({ idempotentHint: true, destructiveHint: true })).toBe(true);
    expect(isIdempotentMcpTool({ destructiveHint: false })).toBe(false);
    expect(isIdempotentMcpTool(undefined)).toBe(false);
  });
});

describe('mcpToolName', () => {
  it('prefixes the name and replaces what a tool name may not hold, within 64 characters', () => {
    expect(mcpToolName('files_', 'read_file')).toBe('files_read_file');
    expect(mcpToolName('gh_', 'repos.get/contents')).toBe('gh_repos_get_contents');
    expect(mcpToolName('p_', 'x'.repeat(80))).toHaveLength(64);
  });
});
