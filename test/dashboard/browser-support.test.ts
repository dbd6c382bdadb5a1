import { describe, expect, it } from 'vitest';
import { findChromium, launchChromium, missingChromiumMessage } from './support/browser.js';

describe('launchChromium', () => {
  it('fails, saying in one line how to get a Chromium, when none of the candidates exists', async () => {
    await expect(launchChromium(['/nonexistent/chromium', '/nonexistent/chrome'])).rejects.toThrow(
      missingChromiumMessage,
    );
    expect(missingChromiumMessage).toContain('npx playwright-core install --with-deps chromium');
    expect(missingChromiumMessage).not.toContain('\n');
  });
});

describe('findChromium', () => {
  it('takes the first candidate that exists when several are given', () => {
    expect(findChromium(['/nonexistent/chromium', process.execPath, '/bin/sh'])).toBe(process.execPath);
  });

  it('finds none when no candidate exists', () => {
    expect(findChromium(['/nonexistent/chromium'])).toBeUndefined();
  });
});
