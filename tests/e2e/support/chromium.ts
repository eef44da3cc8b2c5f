// The Chromium every flow runs in: the binary (E2E_CHROMIUM, default the system one) and the flags
// each launch of it takes, by the config's projects and by a flow that launches its own context.

export const chromiumPath = process.env.E2E_CHROMIUM ?? '/usr/bin/chromium';

export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
