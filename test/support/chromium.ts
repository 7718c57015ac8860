/**
 * Debian's Chromium (`apt-get install chromium`), driven by playwright-core: never a downloaded
 * browser. `CHROMIUM_PATH` overrides the executable. Browser tests fail with a clear message when it
 * is missing (the README and .ci/run install it).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: install Debian's (apt-get install chromium) or set CHROMIUM_PATH`);
  }
  // --no-sandbox: CI and these containers run as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
}
