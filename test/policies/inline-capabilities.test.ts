import { describe, expect, it } from 'vitest';
import { composeMessageText, inlineAttachmentsOf } from '../../src/policies/attachment-prompt.js';
import {
  anthropicInlineCapabilities,
  inlineKindOf,
  inlineKindsFor,
  modelMatches,
  openaiInlineCapabilities,
  refuseInline,
} from '../../src/policies/inline-capabilities.js';
import type { AttachmentRef } from '../../src/core/attachments.js';

describe('modelMatches', () => {
  it('matches globs with * anywhere, and exact names without', () => {
    expect(modelMatches('gpt-4o*', 'gpt-4o-mini')).toBe(true);
    expect(modelMatches('gpt-4o*', 'gpt-4')).toBe(false);
    expect(modelMatches('*-vision', 'llama-vision')).toBe(true);
    expect(modelMatches('a*b*c', 'aXbYc')).toBe(true);
    expect(modelMatches('a*b*c', 'acb')).toBe(false);
    expect(modelMatches('ab*ba', 'aba')).toBe(false);
    expect(modelMatches('m', 'm')).toBe(true);
    expect(modelMatches('m', 'mm')).toBe(false);
  });
});

describe('inlineKindsFor', () => {
  it('takes the first matching row, the overrides before the provider table', () => {
    expect(inlineKindsFor('gpt-4o-mini', [openaiInlineCapabilities])).toEqual(['image', 'pdf']);
    expect(inlineKindsFor('gpt-4o-audio-preview', [openaiInlineCapabilities])).toEqual(['audio']);
    expect(inlineKindsFor('gpt-3.5-turbo', [openaiInlineCapabilities])).toEqual([]);
    expect(inlineKindsFor('claude-opus-4', [anthropicInlineCapabilities])).toEqual(['image', 'pdf']);
    const overrides = [{ model: 'gpt-4o-mini', accepts: ['image' as const] }];
    expect(inlineKindsFor('gpt-4o-mini', [overrides, openaiInlineCapabilities])).toEqual(['image']);
  });
});

describe('inlineKindOf', () => {
  it('classifies media types, ignoring case and parameters', () => {
    expect(inlineKindOf('Image/PNG; q=1')).toBe('image');
    expect(inlineKindOf('audio/mpeg')).toBe('audio');
    expect(inlineKindOf('application/pdf')).toBe('pdf');
    expect(inlineKindOf('image/svg+xml')).toBeUndefined();
    expect(inlineKindOf('text/plain')).toBeUndefined();
  });
});

describe('refuseInline', () => {
  it('refuses the first kind some candidate (primary or fallback) cannot take', () => {
    const candidates = [
      { provider: 'a', model: 'x', accepts: ['image', 'pdf'] as const },
      { provider: 'b', model: 'y', accepts: ['image'] as const },
    ];
    expect(refuseInline(['image'], candidates)).toBeUndefined();
    expect(refuseInline(['image', 'pdf'], candidates)).toEqual({ kind: 'pdf', provider: 'b', model: 'y' });
    expect(refuseInline([], [])).toBeUndefined();
  });
});

describe('composeMessageText and inlineAttachmentsOf', () => {
  const attachment = (mode: 'file' | 'inline', name: string, mediaType: string): AttachmentRef => ({
    type: 'attachment',
    source: 'binary',
    mode,
    name,
    mediaType,
    size: 3,
    sha256: name.padEnd(64, '0'),
    path: `/ws/s/${name}`,
  });

  it('puts text parts and attachment lines after the text, in order', () => {
    const parts = [
      attachment('file', 'a.bin', 'application/octet-stream'),
      { type: 'text' as const, text: 'middle' },
      attachment('inline', 'b.png', 'image/png'),
    ];
    expect(composeMessageText('hello', parts)).toBe(
      'hello\n\n[Attachment "a.bin" (application/octet-stream, 3 bytes) saved at /ws/s/a.bin]\n\nmiddle\n\n' +
        '[Attachment "b.png" (image/png) is included inline]',
    );
    expect(composeMessageText('', [{ type: 'text', text: 'only' }])).toBe('only');
    expect(composeMessageText('plain', undefined)).toBe('plain');
    expect(inlineAttachmentsOf(parts)).toEqual([
      { kind: 'image', mediaType: 'image/png', name: 'b.png', sha256: 'b.png'.padEnd(64, '0') },
    ]);
  });
});
