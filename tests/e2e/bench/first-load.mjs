// First-load benchmark (issue 12): what a phone on a weak network waits for before the console is
// usable. For each console build given (label=base-url of a relay serving it), in headless Chromium
// with a phone viewport, 4x CPU slowdown and 1.6 Mbps down / 750 kbps up / 150 ms RTT:
//   - bytes: every response Chromium receives until the session list is interactive — as sent
//     (encoded, what the relay's Brotli/gzip put on the wire) and as gzip -9 of each body;
//   - first contentful paint (cold; the static shell of index.html where the build has one);
//   - time to the session list painted (its first entry visible: the one the relay pre-rendered into
//     index.html's shell for a signed-in browser, else the console's) and interactive in the console (a
//     session-item visible, the static shell gone), and to a live transcript (transcript visible,
//     connection live), cold (a fresh browser context: no cache, no service worker, signed in by the
//     login link — the navigation is never pre-rendered; where index.html has the boot script that
//     signs in with the link's code and fetches the rendered list, that list is "painted") and warm
//     (the same context loading again once its service worker is active: a returning visitor, whose
//     navigations carry the login secret), median of RUNS runs;
//   - time from tapping the session in the cold-loaded list to its live transcript ("open from list":
//     the session part, the decoder and the live connection load then unless the idle prefetch has
//     already brought them).
//
//   node tests/e2e/bench/first-load.mjs TOKEN SESSION_ID label=http://127.0.0.1:PORT[@SESSION_ID] [label2=…]
//
// Env: BENCH_RUNS (default 3), E2E_CHROMIUM (default /usr/bin/chromium).
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const [token, sessionId, ...targets] = process.argv.slice(2);
if (!token || !sessionId || targets.length === 0) {
  console.error('usage: first-load.mjs TOKEN SESSION_ID label=BASE_URL [label=BASE_URL …]');
  process.exit(2);
}
const runs = Number(process.env.BENCH_RUNS ?? 3);
const phone = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
const network = { offline: false, latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 0.75e6 / 8 };

const browser = await chromium.launch({
  executablePath: process.env.E2E_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});

/** A throttled page in `context`; `sink` collects the responses it receives. */
async function throttled(context, sink) {
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', network);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  const urls = new Map();
  cdp.on('Network.responseReceived', (e) => urls.set(e.requestId, { url: e.response.url, fromCache: e.response.fromDiskCache || e.response.fromServiceWorker }));
  cdp.on('Network.loadingFinished', (e) => sink?.wire.push({ ...(urls.get(e.requestId) ?? { url: '?' }), encoded: e.encodedDataLength }));
  page.on('response', (r) => {
    if (!sink) return;
    sink.bodies.push(
      r
        .body()
        .then((b) => ({ url: r.url(), gzip: gzipSync(b, { level: 9 }).length, raw: b.length }))
        .catch(() => ({ url: r.url(), gzip: 0, raw: 0 })),
    );
  });
  return page;
}

/** Milliseconds from navigating to `url` until each of `readies` (awaited in turn) resolves. */
async function timed(page, url, ...readies) {
  const t0 = performance.now();
  await page.goto(url, { waitUntil: 'commit' });
  const out = [];
  for (const ready of readies) {
    await ready(page);
    out.push(performance.now() - t0);
  }
  return out.length === 1 ? out[0] : out;
}

/** Waits (at most 30 s) until a service worker controls the page: the state of a returning visitor. */
async function serviceWorkerActive(page) {
  await page
    .waitForFunction(() => !!navigator.serviceWorker?.controller, null, { timeout: 30_000 })
    .catch(() => console.error('no service worker took the page within 30 s'));
}

// The list is painted once its first entry shows: in the shell (pre-rendered by the relay, or moved
// there by index.html's boot script on a first visit) or the console's.
const listPainted = (page) =>
  page
    .locator('#boot-shell [data-testid="boot-session-item"]')
    .or(page.locator('[data-testid="session-item"]'))
    .first()
    .waitFor({ state: 'visible', timeout: 60_000 });
// The list is interactive once the console's first entry shows and the static shell is gone.
const listReady = async (page) => {
  await page.locator('[data-testid="session-item"]').first().waitFor({ state: 'visible', timeout: 60_000 });
  await page.locator('#boot-shell').waitFor({ state: 'detached', timeout: 60_000 });
};
/** First contentful paint of the page (the static shell where there is one), in ms from navigation start. */
const firstPaint = (page) =>
  page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN);
const transcriptReady = async (page) => {
  await page.locator('[data-testid="transcript"]').waitFor({ state: 'visible', timeout: 60_000 });
  await page.locator('[data-testid="connection-status"][data-state="live"]').waitFor({ state: 'attached', timeout: 60_000 });
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmtMs = (x) => `${(x / 1000).toFixed(2)} s`;

const rows = [];
for (const target of targets) {
  // label=BASE_URL, or label=BASE_URL@SESSION_ID when that relay's session differs from SESSION_ID.
  const [label, where] = target.split(/=(.*)/s);
  const [base, sid = sessionId] = where.split('@');
  const t = { label, paintCold: [], paintedCold: [], paintedWarm: [], listCold: [], listWarm: [], liveCold: [], liveWarm: [], open: [], bytes: null };
  for (let i = 0; i < runs; i++) {
    // The session list, cold then warm; the first cold run also counts the bytes.
    let ctx = await browser.newContext(phone);
    const sink = i === 0 ? { wire: [], bodies: [] } : null;
    let page = await throttled(ctx, sink);
    const [paintedCold, listCold] = await timed(page, `${base}/#login=${token}`, listPainted, listReady);
    t.paintedCold.push(paintedCold);
    t.listCold.push(listCold);
    t.paintCold.push(await firstPaint(page));
    if (sink) {
      const bodies = await Promise.all(sink.bodies);
      t.bytes = {
        requests: sink.wire.length,
        wire: sink.wire.reduce((n, r) => n + r.encoded, 0),
        gzip: bodies.reduce((n, r) => n + r.gzip, 0),
        raw: bodies.reduce((n, r) => n + r.raw, 0),
        files: bodies.map((b) => ({ ...b, wire: sink.wire.find((w) => w.url === b.url)?.encoded ?? 0 })),
      };
    }
    // Tap the session in the list at once (before the idle prefetch): time to its live transcript.
    {
      const t0 = performance.now();
      await page.locator(`[data-testid="session-item"][data-session-id="${sid}"]`).tap();
      await transcriptReady(page);
      t.open.push(performance.now() - t0);
    }
    await serviceWorkerActive(page);
    const [paintedWarm, listWarm] = await timed(page, `${base}/`, listPainted, listReady);
    t.paintedWarm.push(paintedWarm);
    t.listWarm.push(listWarm);
    await ctx.close();
    // A live transcript, cold then warm.
    ctx = await browser.newContext(phone);
    page = await throttled(ctx, null);
    t.liveCold.push(await timed(page, `${base}/s/${sid}#login=${token}`, transcriptReady));
    t.liveWarm.push(await timed(page, `${base}/s/${sid}`, transcriptReady));
    await ctx.close();
  }
  rows.push(t);
}
await browser.close();

console.log(`phone 390x844, CPU 4x slower, 1.6 Mbps down / 750 kbps up, 150 ms RTT; median of ${runs} runs`);
for (const t of rows) {
  console.log(`\n[${t.label}] files fetched before the session list is interactive (first cold run):`);
  for (const f of t.bytes.files) {
    const name = new URL(f.url).pathname.replace(/\?.*/, '');
    console.log(`  ${name.padEnd(48)} ${String(f.raw).padStart(9)} raw ${String(f.gzip).padStart(8)} gzip-9 ${String(f.wire).padStart(8)} on the wire`);
  }
  console.log(`  ${'total'.padEnd(48)} ${String(t.bytes.raw).padStart(9)} raw ${String(t.bytes.gzip).padStart(8)} gzip-9 ${String(t.bytes.wire).padStart(8)} on the wire (goal <= 200000 gzip-9)`);
}
console.log('\n' + ['build', 'first paint', 'painted cold', 'list cold', 'painted warm', 'list warm', 'open from list', 'live cold', 'live warm', 'gzip-9 bytes', 'wire bytes'].map((h) => h.padEnd(14)).join(''));
for (const t of rows) {
  console.log(
    [t.label, fmtMs(median(t.paintCold)), fmtMs(median(t.paintedCold)), fmtMs(median(t.listCold)), fmtMs(median(t.paintedWarm)), fmtMs(median(t.listWarm)), fmtMs(median(t.open)), fmtMs(median(t.liveCold)), fmtMs(median(t.liveWarm)), String(t.bytes.gzip), String(t.bytes.wire)]
      .map((c) => c.padEnd(14))
      .join(''),
  );
}
console.log('(goal: list cold <= 1.2 s; first paint: first-contentful-paint of the cold load, the static shell where there is one;');
console.log(' painted: the list\'s first entry visible, in the shell (relay or boot script) or the console\'s; list: interactive in the console)');
