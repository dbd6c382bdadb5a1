import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Where the browser tests look for a Chromium, in order: `AGENTLANES_TEST_CHROMIUM`, the system's (Debian's
 * `chromium`, Ubuntu's `chromium-browser`, Google Chrome), then the one `npx playwright-core install chromium`
 * downloads into Playwright's cache.
 */
export function chromiumCandidates(): string[] {
  const configured = process.env.AGENTLANES_TEST_CHROMIUM;
  return [
    ...(configured === undefined || configured === '' ? [] : [configured]),
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
    '/usr/bin/google-chrome-stable',
    chromium.executablePath(),
  ];
}

/** The first of `candidates` that exists, or undefined. */
export function findChromium(candidates: readonly string[] = chromiumCandidates()): string | undefined {
  return candidates.find((candidate) => existsSync(candidate));
}

/** How to get a Chromium, in one line: the message of every browser test on a machine without one. */
export const missingChromiumMessage =
  'No Chromium for the dashboard browser tests: run `npx playwright-core install --with-deps chromium` ' +
  '(or install the system chromium package, or set AGENTLANES_TEST_CHROMIUM to a Chromium binary).';

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

/**
 * Launch the first Chromium found among `candidates`, or fail (never skip: a skipped test hides what it pins)
 * saying in one line how to get one.
 */
export async function launchChromium(candidates: readonly string[] = chromiumCandidates()): Promise<Browser> {
  const executablePath = findChromium(candidates);
  if (executablePath === undefined) throw new Error(missingChromiumMessage);
  return chromium.launch({ executablePath, args: chromiumArgs });
}
