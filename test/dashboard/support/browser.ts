import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium, which the browser tests drive (npm cannot download a browser here). */
export const chromiumPath = '/usr/bin/chromium';

/** Flags for a quiet headless Chromium in a container: no sandbox, GPU, background traffic or updates. */
const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-quic',
];

/** Launch Chromium, or fail (never skip) saying how to install it. */
export async function launchChromium(executablePath = chromiumPath): Promise<Browser> {
  if (!existsSync(executablePath)) {
    throw new Error(
      `Chromium is not installed at ${executablePath}; the dashboard's browser tests need it: ` +
        'run `apt-get update && apt-get install -y chromium` (as root), then run the tests again.',
    );
  }
  return chromium.launch({ executablePath, args: chromiumArgs });
}
