// Debian's Chromium as the page tests drive it (playwright-core; never a browser download: scripts/browser.sh).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env.REELFLOW_CHROMIUM ?? '/usr/bin/chromium';

/** Headless, no sandbox (tests run as root here), and nothing that reaches out of the machine. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function assertChromium(): void {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: run scripts/browser.sh`);
}
