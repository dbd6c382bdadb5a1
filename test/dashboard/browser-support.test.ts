import { describe, expect, it } from 'vitest';
import { launchChromium } from './support/browser.js';

describe('launchChromium', () => {
  it('fails, saying how to install Chromium, when the browser is missing', async () => {
    await expect(launchChromium('/nonexistent/chromium')).rejects.toThrow(
      'apt-get update && apt-get install -y chromium',
    );
  });
});
