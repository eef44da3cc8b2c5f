// Runs a console browser benchmark (tests/bench.rs) in headless Chromium with the CPU slowed down,
// as a phone: wasm-bindgen-test-runner serves the benchmark page in its interactive mode
// (`NO_HEADLESS=1`, `WASM_BINDGEN_TEST_ADDRESS`), this opens it with CDP
// `Emulation.setCPUThrottlingRate` and prints what the page prints, until its test result.
//
//   node tests/e2e/bench/wasm-bench-throttled.mjs URL [RATE]
//
// Env: E2E_CHROMIUM (default /usr/bin/chromium).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const [url, rateArg] = process.argv.slice(2);
if (!url) {
  console.error('usage: wasm-bench-throttled.mjs URL [RATE]');
  process.exit(2);
}
const rate = Number(rateArg ?? 4);
const browser = await chromium.launch({
  executablePath: process.env.E2E_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // The benchmark prints its table with console.log.
  const logged = [];
  page.on('console', (m) => logged.push(m.text()));
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate });
  // The runner's page serves until killed; it is up once it answers.
  for (let i = 0; ; i++) {
    try {
      await page.goto(url, { waitUntil: 'load' });
      break;
    } catch (e) {
      if (i > 600) throw e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  console.log(`(CPU slowed down ${rate}x)`);
  await page.waitForFunction(() => /test result: /.test(document.getElementById('output')?.textContent ?? ''), null, {
    timeout: 600_000,
    polling: 1000,
  });
  const out = await page.evaluate(() => document.getElementById('output').textContent);
  const lines = [...logged, ...out.split('\n')].filter((l) => /^[|+]|benchmark|test result|FAIL|panicked/.test(l));
  console.log(lines.join('\n'));
  if (!/test result: ok/.test(out)) process.exitCode = 1;
} finally {
  await browser.close();
}
