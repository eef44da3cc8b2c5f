// Notification -> Allow interactive (issue 29): how long a phone waits, after tapping a "Claude needs
// you" push notification, until the permission dialog's Allow button can be tapped.
//
// The notification opens `/s/<session id>` (the `url` of the relay's needs_you payload,
// crates/relay/src/features/push/payload.rs; www/sw.js's notificationclick opens it with
// clients.openWindow, no query, no fragment). Here a new page of headless Chromium is navigated to that
// URL, as openWindow does, with first-load.mjs's phone: viewport 390x844, mobile, touch, CPU 4x slower
// (CDP Emulation.setCPUThrottlingRate), network 1.6 Mbps down / 750 kbps up / 150 ms RTT (CDP
// Network.emulateNetworkConditions on the page, and on every service worker too: a page's emulation
// does not reach its service worker's fetches — the navigation of a controlled page goes out through
// sw.js's fetch() and was unthrottled, 35 ms for a 1.5 s RTT. CDP cannot slow a service worker's CPU,
// and it emulates a link per target: the service worker's fetches (cold: its install precaching the
// whole build) do not take bandwidth from the page's, as they would on a phone — the output says how
// many bytes that is).
//
// The session has a pending permission prompt (`can_use_tool` of a Bash call, state
// requires_action) when the page opens. The figure is the time from navigation start (the page's
// performance.timeOrigin, 0 below) to the first frame in which an Allow button — the quick answer's
// ([data-testid=boot-prompt-allow], drawn by index.html's boot script from the page's boot data before
// the console runs) or the console's dialog's ([data-testid=permission-allow]); the table says which
// took each tap — is enabled, has a box, and document.elementFromPoint at its centre
// returns it or a descendant — checked in every animation frame by a script the page runs first,
// stamped by a task posted from that frame (after it is painted). Then Allow is tapped, and the run
// counts only if the dialog goes away and the relay records the answer (a client control_response
// `allow` for that request, nothing pending).
//
// Two sessions, each measured cold and warm, BENCH_RUNS times (default 3), interleaved:
//   - demo: the built-in demo agent (`bridge-relay --demo`, default scenario): each prompt is one
//     demo turn (thinking, markdown, a Bash call that asks);
//   - long: a session of 10,000 transcript messages (BENCH_MESSAGES) made by the demo agent on a
//     scenario written at start (notify-allow-scenario.mjs: turns of prose, Read/Bash/Grep/Glob calls
//     and their results), whose last turn asks; counted through GET …/events before every run.
//   Every run asks again with a new short turn (the previous prompt was answered), so a session grows
//   by a few messages per run; the table shows its size at the first run.
// Cold: a new browser context — no HTTP cache, no service worker — already signed in the way a phone
// that gets notifications is: the login cookie and the login secret in localStorage (from one
// POST /v1/auth/login made outside the browser; nothing of the app loaded before).
// Warm: a browser profile on disk (launchPersistentContext: HTTP cache, code cache, Cache Storage)
// that loaded the console through the login link and once more, whose service worker is active (the
// build precached, the login secret mirrored to it); every run opens a new page in it (a returning
// visitor).
//
// Printed: for each session × cold/warm the median and every run against the goal (warm <= 1.0 s,
// cold <= 2.0 s), then where the time goes: the median of each milestone over the runs (HTML,
// first paint, main JS/wasm fetched, console started = wasm instantiated and the app running, the
// session / live / dialogs parts fetched, the history stream's request, first byte and end of the
// replay with its size, dialog painted, Allow hit-testable, and the main thread's busy time), and
// every request of the median run started before Allow (start, response headers, end, bytes on the
// wire; `sw` = answered by the service worker, `(sw)` = fetched by the service worker itself,
// `cache` = HTTP cache). All times in ms from navigation start of the opened page (CDP timestamps
// are mapped to that clock through the document request's wall time).
//
//   node tests/e2e/bench/notify-allow.mjs RELAY_BIN DIST_DIR
//
// It starts two relays (`--demo`, and `--demo-scenario` for the long session; BRIDGE_DEMO_SPEED=0) on
// loopback with temporary data/cwd directories, removed at exit. Exit status 1 when a run fails.
// Env: BENCH_RUNS (3), BENCH_MESSAGES (10000), E2E_CHROMIUM (/usr/bin/chromium), BENCH_QUICK=0 (the page's
// quick answer switched off: the console's own dialog measured).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { longSessionScenario, PROMPT_MATCH } from './notify-allow-scenario.mjs';

const require = createRequire(import.meta.url);
const { chromium, request: apiRequest } = require('playwright-core');

const [relayBin, staticDirArg] = process.argv.slice(2);
if (!relayBin || !staticDirArg) {
  console.error('usage: notify-allow.mjs RELAY_BIN DIST_DIR');
  process.exit(2);
}
const staticDir = resolve(staticDirArg);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const messages = Number(process.env.BENCH_MESSAGES ?? 10_000);
const token = 'bench-notify-allow-token-0123456789abcdef';
const phone = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
const network = { offline: false, latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 0.75e6 / 8 };
const GOAL = { cold: 2000, warm: 1000 };
const QUICK = process.env.BENCH_QUICK !== '0';
const LOGIN_SECRET_KEY = 'bridge-console.login-secret'; // src/net.rs
// The long session's replay is ~17 MB at 200 KB/s: allow minutes.
const RUN_TIMEOUT = 600_000;

const root = mkdtempSync(join(tmpdir(), 'bridge-notify-allow-'));
const relays = [];
let browser = null;
const cleanup = () => {
  for (const r of relays) r.proc.kill('SIGTERM');
  rmSync(root, { recursive: true, force: true });
};
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(1));
let stage = 'starting';
setTimeout(() => {
  console.error(`notify-allow bench: stuck while ${stage} after 60 min`);
  for (const r of relays) console.error(`[${r.label}] relay log:\n${r.log().slice(-3000)}`);
  process.exit(1);
}, 3_600_000).unref();

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};
const sec = (ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : '—');
const msf = (ms) => (Number.isFinite(ms) ? String(Math.round(ms)) : '—');
const kb = (b) => (b >= 1e6 ? `${(b / 1e6).toFixed(1)} MB` : `${(b / 1e3).toFixed(1)} KB`);

// ------------------------------------------------------------------------------------------- relays

async function startRelay(label, args) {
  const data = join(root, `${label}-data`);
  const cwd = join(root, `${label}-cwd`);
  mkdirSync(data);
  mkdirSync(cwd);
  const proc = spawn(relayBin, [...args, '--bind', '127.0.0.1:0', '--static-dir', staticDir, '--data-dir', data, '--cwd', cwd], {
    env: { ...process.env, BRIDGE_RELAY_TOKEN: token, BRIDGE_DEMO_SPEED: '0', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  proc.stderr.on('data', (c) => (log = (log + c).slice(-50_000)));
  const relay = { label, proc, log: () => log, base: '' };
  relays.push(relay);
  relay.base = await new Promise((ok, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`the ${label} relay did not start:\n${log}`)), 60_000);
    proc.on('exit', (code) => fail(new Error(`the ${label} relay exited (${code}):\n${log}`)));
    // The relay prints `listening on ADDR` last (crates/relay/src/main.rs).
    proc.stdout.on('data', (c) => {
      out += c;
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(`http://${m[1]}`);
      }
    });
  });
  return relay;
}

async function api(relay, path, body) {
  const r = await fetch(`${relay.base}${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json();
}
const session = (relay, sid) => api(relay, `/v1/code/sessions/${sid}`);
async function waitFor(what, fn, timeout = 120_000) {
  const until = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
async function say(relay, sid, text) {
  const before = (await session(relay, sid)).last_sequence_num;
  await api(relay, `/v1/code/sessions/${sid}/events`, {
    session_id: sid,
    events: [{ payload: { type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: sid, uuid: crypto.randomUUID() } }],
  });
  return before;
}
/** Sends `text` and waits until its turn has ended (`result`, state idle). */
async function turn(relay, sid, text) {
  const before = await say(relay, sid, text);
  await waitFor(`the turn "${text.slice(0, 40)}"`, async () => {
    const s = await session(relay, sid);
    return s.state === 'idle' && s.last_sequence_num > before + 1;
  });
}
/** Sends `text` and waits until the agent's `can_use_tool` prompt is pending; its request id. */
async function ask(relay, sid, text) {
  const before = await say(relay, sid, text);
  return waitFor('the permission prompt', async () => {
    const s = await session(relay, sid);
    const p = (s.pending_requests ?? []).find((r) => r.subtype === 'can_use_tool' && r.sequence_num > before);
    return s.state === 'requires_action' && p ? p.request_id : null;
  });
}
/** Every event of the session (GET …/events, paged). */
async function events(relay, sid, after = 0) {
  const out = [];
  for (;;) {
    const r = await api(relay, `/v1/code/sessions/${sid}/events?after=${after}&limit=10000`);
    out.push(...r.events);
    if (r.events.length === 0) return out;
    after = r.events[r.events.length - 1].sequence_num;
    if (after >= r.last_sequence_num) return out;
  }
}
/** Transcript messages: prompts sent, assistant blocks, tool results (not the agent's replays of prompts). */
const isMessage = (e) => (e.payload.type === 'assistant' || e.payload.type === 'user') && !e.payload.isReplay;
/** The session's history as the console's stream replays it: events, messages, and the bytes of the
 *  SSE replay from the start up to the end of the last stored event's frame (read as the browser does). */
async function history(relay, sid) {
  const all = await events(relay, sid);
  const last = all[all.length - 1].sequence_num;
  const abort = new AbortController();
  const r = await fetch(`${relay.base}/v1/code/sessions/${sid}/events/stream`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: abort.signal,
  });
  const chunks = [];
  let size = 0;
  let tail = '';
  const marker = `id: ${last}\n`;
  let bytes = 0;
  for await (const c of r.body) {
    chunks.push(c);
    size += c.length;
    // The frame `id: LAST` … ends with a blank line; decode only the recent tail.
    tail = (tail + Buffer.from(c).toString('latin1')).slice(-(c.length + 200_000));
    const at = tail.lastIndexOf(marker);
    if (at >= 0 && (at === 0 || tail[at - 1] === '\n')) {
      const end = tail.indexOf('\n\n', at);
      if (end >= 0) {
        bytes = size - (tail.length - (end + 2));
        break;
      }
    }
  }
  abort.abort();
  return { events: all.length, messages: all.filter(isMessage).length, lastSeq: last, bytes };
}

// ------------------------------------------------------------------------------------------ browser

/** Runs in the opened page before its own scripts: stamps each milestone once, in animation frames. */
function probe() {
  const marks = {};
  window.__notifyAllow = { marks };
  const mark = (k, t) => {
    if (!(k in marks)) marks[k] = t ?? performance.now();
  };
  const q = (s) => document.querySelector(s);
  const boxed = (el) => {
    if (!el) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const tick = () => {
    const now = performance.now();
    if (document.readyState !== 'loading') {
      const shell = document.getElementById('boot-shell');
      // src/boot.rs: the console marks the shell data-console when it starts, removes it when its
      // first screen is ready.
      if (!shell || shell.hasAttribute('data-console')) mark('consoleStarted', now);
      if (!shell) mark('shellGone', now);
    }
    if (q('[data-testid="session-loading"]')) mark('sessionLoading', now);
    if (boxed(q('[data-testid="transcript"]'))) mark('transcript', now);
    if (q('[data-testid="connection-status"][data-state="live"]')) mark('live', now);
    if (q('[data-testid="prompt-loading"]')) mark('promptLoading', now);
    if (boxed(q('[data-testid="boot-prompt"]'))) mark('quickDialog', now);
    if (boxed(q('[data-testid="permission-dialog"]'))) mark('dialog', now);
    // The quick answer (index.html's boot script, before the console runs) or the console's dialog.
    for (const [sel, by] of [['[data-testid="boot-prompt-allow"]', 'quick'], ['[data-testid="permission-allow"]', 'console']]) {
      const b = q(sel);
      if (!b || b.disabled || !boxed(b)) continue;
      const r = b.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      if (hit && (hit === b || b.contains(hit))) {
        mark('allowHit', now);
        marks.by = by;
        // A task posted from the frame's callbacks runs after that frame is painted.
        const ch = new MessageChannel();
        ch.port1.onmessage = () => mark('allow');
        ch.port2.postMessage(0);
        return;
      }
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}

// Service workers get the phone's network too: a page's emulation does not reach their fetches (the
// navigation of a controlled page, the install's precache). It has to be in place before a new
// worker runs its first line, or the install's first fetches go out unthrottled (seen), and CDP gives
// no second client a say in when a worker starts: Playwright attaches to every worker paused and
// resumes it at once from its own session. So the emulation is sent on that very session, ahead of
// Playwright's resume: a setter on `_session` of Playwright's server-side Worker class (the service
// worker's constructor assigns its CDP session there before it resumes the worker). This reaches
// into Playwright internals (playwright-core 1.65, tests/e2e/package-lock.json); without them the bench
// says so and stops, and every run checks the service worker's own fetches were slowed.
let throttledWorkers = 0;
function throttleServiceWorkersFromTheStart() {
  const Worker = require('playwright-core/lib/coreBundle').server?.Worker;
  if (!Worker?.prototype || Object.getOwnPropertyDescriptor(Worker.prototype, '_session')) return false;
  Object.defineProperty(Worker.prototype, '_session', {
    configurable: true,
    set(session) {
      Object.defineProperty(this, '_session', { value: session, writable: true, configurable: true, enumerable: true });
      if (/ServiceWorker/.test(this.constructor?.name ?? '') && typeof session?.send === 'function') {
        throttledWorkers++;
        session.send('Network.enable').catch(() => {});
        session.send('Network.emulateNetworkConditions', network).catch(() => {});
      }
    },
  });
  return true;
}

/** A signed-in browser's state without loading the app: the login cookie and the secret the console keeps. */
async function signedInState(relay) {
  const req = await apiRequest.newContext();
  const r = await req.post(`${relay.base}/v1/auth/login`, { data: { token } });
  if (!r.ok()) throw new Error(`login: ${r.status()} ${await r.text()}`);
  const { login_secret: secret } = await r.json();
  const { cookies } = await req.storageState();
  await req.dispose();
  return { cookies, origins: [{ origin: relay.base, localStorage: [{ name: LOGIN_SECRET_KEY, value: secret }] }] };
}

const chromiumOptions = {
  executablePath: process.env.E2E_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
};

/**
 * A browser profile on disk (HTTP cache, code cache, Cache Storage, service workers) that has loaded
 * the console and whose service worker is active, the build precached.
 */
async function warmContext(relay) {
  const dir = join(root, `${relay.label}-profile`);
  const ctx = await chromium.launchPersistentContext(dir, { ...chromiumOptions, ...phone });
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(`${relay.base}/#login=${token}`);
  await page.locator('[data-testid="session-list"]').first().waitFor({ state: 'attached', timeout: 60_000 });
  await page.waitForFunction(
    async () => {
      const reg = await navigator.serviceWorker?.getRegistration();
      if (!navigator.serviceWorker?.controller || reg?.active?.state !== 'activated') return false;
      const device = await caches.open('bridge-device');
      return !!(await device.match('/__bridge/login'));
    },
    null,
    { timeout: 60_000, polling: 250 },
  );
  // Once more under the service worker (a returning visitor has been here before).
  await page.goto(`${relay.base}/`);
  await page.locator('[data-testid="session-item"]').first().waitFor({ state: 'visible', timeout: 60_000 });
  // Every file of sw.js's precache list in its cache.
  const precache = await page.evaluate(async () => {
    const text = await (await fetch('/sw.js')).text();
    return JSON.parse(/self\.__PRECACHE = (\[[^\]]*\])/.exec(text)?.[1] ?? '[]').length;
  });
  const countCached = () =>
    page.evaluate(async () => {
      let n = 0;
      for (const name of await caches.keys()) if (name.startsWith('bridge-shell-')) n += (await (await caches.open(name)).keys()).length;
      return n;
    });
  await waitFor('the precache', async () => (await countCached()) >= precache, 60_000);
  const cached = `${await countCached()} of ${precache}`;
  await sleep(3000); // the idle prefetch of the lazy parts
  await page.close();
  return { ctx, cached };
}

/**
 * Opens `url` in a new throttled page of `ctx` as a notification does, waits until Allow is
 * interactive, taps it and checks the answer reached the relay. Returns the page's milestones and
 * its requests, in ms from navigation start.
 */
async function openFromNotification(ctx, relay, sid, requestId, hist) {
  // The service worker's own fetches (Playwright reports them with its timing; wall-clock ms).
  const swFetches = [];
  const swSizes = [];
  const onSwRequest = (req) => {
    if (!req.serviceWorker()) return;
    const t = req.timing();
    const r = { url: req.url(), wallStart: t.startTime, headersMs: t.responseStart, endMs: t.responseEnd, bytes: 0, failed: req.failure()?.errorText };
    swFetches.push(r);
    swSizes.push(req.sizes().then((z) => (r.bytes = z.responseBodySize + z.responseHeadersSize)).catch(() => {}));
  };
  ctx.on('requestfinished', onSwRequest);
  ctx.on('requestfailed', onSwRequest);
  const page = await ctx.newPage();
  const cdp = await ctx.newCDPSession(page);
  const net = new Map();
  let doc = null;
  cdp.on('Network.requestWillBeSent', (e) => {
    if (!net.has(e.requestId)) net.set(e.requestId, { url: e.request.url, start: e.timestamp, chunks: [], bytes: 0 });
    if (!doc && e.type === 'Document') doc = e;
  });
  cdp.on('Network.responseReceived', (e) => {
    const r = net.get(e.requestId);
    // Headers received, by the network's own timing (the event itself is stamped when the renderer
    // gets to it, later on a busy main thread).
    const t = e.response.timing;
    const headers = t && t.receiveHeadersEnd >= 0 ? t.requestTime + t.receiveHeadersEnd / 1000 : e.timestamp;
    if (r) Object.assign(r, { headers, status: e.response.status, sw: e.response.fromServiceWorker, cached: e.response.fromDiskCache || e.response.fromPrefetchCache });
  });
  cdp.on('Network.dataReceived', (e) => net.get(e.requestId)?.chunks.push([e.timestamp, e.dataLength, e.encodedDataLength]));
  cdp.on('Network.loadingFinished', (e) => {
    const r = net.get(e.requestId);
    if (r) Object.assign(r, { end: e.timestamp, bytes: e.encodedDataLength });
  });
  cdp.on('Network.loadingFailed', (e) => {
    const r = net.get(e.requestId);
    if (r) Object.assign(r, { end: e.timestamp, failed: e.errorText });
  });
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', network);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  await cdp.send('Performance.enable');
  await page.addInitScript(probe);
  // BENCH_QUICK=0: without the quick answer (the page's boot script cannot install it), the console's
  // own dialog is what takes the tap.
  if (!QUICK) await page.addInitScript(() => Object.defineProperty(window, '__bridgeAsk', { get: () => undefined, set: () => {} }));
  const t0 = performance.now();
  await page.goto(`${relay.base}/s/${sid}`, { waitUntil: 'commit', timeout: RUN_TIMEOUT });
  try {
    await page.waitForFunction(() => window.__notifyAllow?.marks.allow !== undefined, null, { timeout: RUN_TIMEOUT, polling: 250 });
  } catch (e) {
    const marks = await page.evaluate(() => window.__notifyAllow?.marks).catch(() => null);
    throw new Error(`Allow never became interactive (${e.message.split('\n')[0]}); milestones so far: ${JSON.stringify(marks)}`);
  }
  const nodeMs = performance.now() - t0;
  // The page's main thread until now (Allow seen by Node: up to one 250 ms poll after it).
  const perf = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x) => [x.name, x.value * 1000]));
  const seen = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    return {
      timeOrigin: performance.timeOrigin,
      marks: window.__notifyAllow.marks,
      nav: nav && { workerStart: nav.workerStart, fetchStart: nav.fetchStart, responseStart: nav.responseStart, responseEnd: nav.responseEnd, transfer: nav.transferSize },
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime,
      resources: performance.getEntriesByType('resource').map((r) => ({ name: r.name, start: r.startTime, end: r.responseEnd, transfer: r.transferSize })),
    };
  });
  // CDP timestamps (seconds, the browser's monotonic clock) -> ms since the page's navigation start.
  const toPage = doc ? (ts) => (ts - doc.timestamp + doc.wallTime) * 1000 - seen.timeOrigin : () => NaN;

  // The answer: tap Allow, the dialog goes, the relay has it.
  // (the quick dialog gives way to the console's if the console starts in between: whichever is there)
  await page.locator('[data-testid="boot-prompt-allow"], [data-testid="permission-allow"]').first().tap();
  await page.waitForFunction(() => !document.querySelector('[data-testid="boot-prompt"], [data-testid="permission-dialog"]'), null, { timeout: 60_000 });
  await waitFor('the answer to reach the relay', async () => {
    const s = await session(relay, sid);
    return !(s.pending_requests ?? []).some((r) => r.request_id === requestId);
  }, 30_000);
  const answer = (await events(relay, sid, hist.lastSeq)).find(
    (e) => e.source === 'client' && e.payload.type === 'control_response' && e.payload.response?.request_id === requestId,
  );
  if (answer?.payload.response?.response?.behavior !== 'allow') {
    throw new Error(`the relay has no Allow for ${requestId}: ${JSON.stringify(answer?.payload ?? null).slice(0, 300)}`);
  }
  await page.close();
  ctx.off('requestfinished', onSwRequest);
  ctx.off('requestfailed', onSwRequest);

  // The history stream (SSE): its request, first byte, and the chunk completing the replay.
  const streams = [...net.values()].filter((r) => r.url.includes(`/sessions/${sid}/events/stream`));
  const sse = streams[0];
  let historyDone = NaN;
  let historyWire = 0;
  if (sse) {
    let got = 0;
    for (const [ts, len, enc] of sse.chunks) {
      got += len;
      historyWire += enc;
      if (got >= hist.bytes) {
        historyDone = toPage(ts);
        break;
      }
    }
  }
  const res = (re) => seen.resources.find((r) => re.test(new URL(r.name).pathname));
  const m = seen.marks;
  const milestones = {
    'service worker started': seen.nav?.workerStart > 0 ? seen.nav.workerStart : NaN,
    'HTML first byte': seen.nav?.responseStart,
    'HTML loaded': seen.nav?.responseEnd,
    'first contentful paint': seen.fcp,
    'main JS fetched': res(/\/bridge-console\.js$/)?.end,
    'main wasm fetched': res(/\/bridge-console_bg\.wasm$/)?.end,
    'console started (wasm instantiated)': m.consoleStarted,
    'session part fetched': res(/\/split_session\.wasm$/)?.end,
    'live part fetched': res(/\/split_live\.wasm$/)?.end,
    'history request sent': sse ? toPage(sse.start) : NaN,
    'history first byte': sse?.headers ? toPage(sse.headers) : NaN,
    'history replayed (bytes in)': historyDone,
    'dialogs part fetched': res(/\/split_dialogs\.wasm$/)?.end,
    'shell removed': m.shellGone,
    'transcript visible': m.transcript,
    'connection live': m.live,
    'prompt known, dialog loading': m.promptLoading,
    'quick dialog painted (boot script)': m.quickDialog,
    'console dialog painted': m.dialog,
    'Allow hit-testable': m.allowHit,
    'Allow interactive (painted)': m.allow,
    '[duration] main thread, all tasks': perf.TaskDuration,
    '[duration]   of which script': perf.ScriptDuration,
    '[duration]   of which style + layout': (perf.RecalcStyleDuration ?? 0) + (perf.LayoutDuration ?? 0),
  };
  const waterfall = [...net.values()].filter((r) => toPage(r.start) <= m.allow).map((r) => ({
    url: r.url,
    start: toPage(r.start),
    headers: r.headers ? toPage(r.headers) : NaN,
    end: r === sse ? historyDone : r.end ? toPage(r.end) : NaN,
    bytes: r === sse ? historyWire : r.bytes || r.chunks.reduce((n, c) => n + c[2], 0),
    how: r.failed ? `failed ${r.failed}` : r.sw ? 'sw' : r.cached ? 'cache' : r === sse ? 'stream (replay part)' : '',
  }));
  // The service worker's own fetches before Allow (the warm navigation; cold: its install).
  await Promise.all(swSizes);
  for (const r of swFetches) {
    const start = r.wallStart - seen.timeOrigin;
    if (start > m.allow) continue;
    const at = (ms) => (ms >= 0 ? start + ms : NaN);
    waterfall.push({ url: r.url, start, headers: at(r.headersMs), end: at(r.endMs), bytes: r.bytes, how: r.failed ? `(sw) failed ${r.failed}` : '(sw)' });
  }
  waterfall.sort((a, b) => a.start - b.start);
  // Each service worker fetch of more than 20 KB took at least its size at 1.6 Mbps: else the
  // emulation missed it and the figure is not the phone's.
  const fast = waterfall.filter((w) => w.how === '(sw)' && w.bytes > 20_000 && w.end - w.start < (w.bytes / network.downloadThroughput) * 1000 * 0.8);
  if (fast.length) console.error(`warning: service worker fetches faster than the emulated link: ${fast.map((w) => `${new URL(w.url).pathname} ${w.bytes} B in ${msf(w.end - w.start)} ms`).join(', ')}`);
  // What the service worker fetched itself before Allow (cold: its install's precache), on a link
  // of its own here; a phone has one link for both.
  const swBytes = waterfall.filter((w) => w.how.startsWith('(sw)') && w.end <= m.allow).reduce((n, w) => n + (w.bytes || 0), 0);
  return { allow: m.allow, by: m.by, nodeMs, milestones, waterfall, streams: streams.length, swBytes };
}

// ---------------------------------------------------------------------------------------------- run

stage = 'starting the relays';
const { scenario, prompts } = longSessionScenario(messages);
const scenarioFile = join(root, 'long-scenario.json');
writeFileSync(scenarioFile, JSON.stringify(scenario));
const demoRelay = await startRelay('demo', ['--demo']);
const longRelay = await startRelay('long', ['--demo-scenario', scenarioFile]);

const kinds = [
  { key: 'demo', label: 'demo session', relay: demoRelay, ask: (i) => `Please show me the demo (notify-allow run ${i}).` },
  { key: 'long', label: `${messages.toLocaleString('en-US')}-message session`, relay: longRelay, ask: (i) => `${PROMPT_MATCH} run ${i}` },
];
for (const k of kinds) {
  ({ session_id: k.sid } = await api(k.relay, '/v1/code/sessions', { title: `notify-allow bench: ${k.label}` }));
}
stage = `writing the ${messages}-message session`;
const fillStart = performance.now();
for (const p of prompts) await turn(longRelay, kinds[1].sid, p);
const fillSecs = (performance.now() - fillStart) / 1000;

stage = 'starting Chromium';
if (!throttleServiceWorkersFromTheStart()) throw new Error("cannot reach Playwright's service worker sessions to throttle them (playwright-core changed?)");
browser = await chromium.launch(chromiumOptions);
for (const k of kinds) {
  stage = `preparing the ${k.key} relay's browsers`;
  k.signedIn = await signedInState(k.relay);
  const warm = await warmContext(k.relay);
  k.warm = warm.ctx;
  k.precached = warm.cached;
  k.results = { cold: [], warm: [] };
}
if (throttledWorkers < kinds.length) throw new Error(`the warm contexts' service workers were not throttled (${throttledWorkers} of ${kinds.length}): Playwright's internals changed?`);

let failed = false;
let n = 0;
for (let i = 1; i <= runs; i++) {
  for (const k of kinds) {
    for (const mode of ['cold', 'warm']) {
      n++;
      stage = `run ${i}: ${k.key} ${mode}`;
      let ctx = null;
      try {
        const requestId = await ask(k.relay, k.sid, k.ask(n));
        const hist = await history(k.relay, k.sid);
        ctx = mode === 'warm' ? k.warm : await browser.newContext({ ...phone, storageState: k.signedIn });
        const r = await openFromNotification(ctx, k.relay, k.sid, requestId, hist);
        k.results[mode].push({ ...r, hist });
        console.error(`run ${i} ${k.key} ${mode}: Allow interactive at ${sec(r.allow)} (${hist.messages} messages, ${kb(hist.bytes)} of history)`);
      } catch (e) {
        failed = true;
        console.error(`run ${i} ${k.key} ${mode} FAILED: ${e.message}`);
        console.error(`[${k.relay.label}] relay log (tail):\n${k.relay.log().slice(-2000)}`);
      } finally {
        if (ctx && mode === 'cold') await ctx.close();
      }
      // Let the turn end (the answer's tool result and text) before the next prompt.
      await waitFor('the turn to end', async () => (await session(k.relay, k.sid)).state === 'idle', 120_000).catch(() => {});
    }
  }
}
stage = 'closing';
for (const k of kinds) await k.warm.close();
await browser.close();
for (const r of relays) r.proc.kill('SIGTERM');

// ------------------------------------------------------------------------------------------- report

console.log('Notification -> Allow interactive: /s/<id> opened in a new page (what the notification opens) for a session');
console.log('with a pending can_use_tool prompt, until the dialog\'s Allow is enabled, hit-testable (elementFromPoint at its');
console.log('centre) and painted; then Allow is tapped and the answer checked at the relay.');
console.log(`Headless Chromium, phone 390x844 mobile+touch, CPU 4x slower, 1.6 Mbps down / 750 kbps up / 150 ms RTT (page and`);
console.log(`service worker network; the service worker's CPU is not slowed); release relay on loopback; ${runs} runs each.`);
console.log('Times: ms from the opened page\'s navigation start (performance.timeOrigin).');
console.log('cold = new context, no HTTP cache, no service worker, signed in (cookie + stored login secret);');
console.log('warm = service worker active, build precached, HTTP cache kept (a returning visitor); a new page each run.');
console.log(`(the ${messages.toLocaleString('en-US')}-message session was written in ${fillSecs.toFixed(1)} s: ${prompts.length} turns of the demo agent on notify-allow-scenario.mjs)`);
console.log('');
const head = ['session', 'history at run 1', 'mode', 'median', 'goal', 'runs', 'Allow of'];
const rows = [];
for (const k of kinds) {
  for (const mode of ['cold', 'warm']) {
    const rs = k.results[mode];
    const h = rs[0]?.hist;
    const med = median(rs.map((r) => r.allow));
    rows.push([
      k.label,
      h ? `${h.messages} msgs, ${kb(h.bytes)}` : '—',
      mode,
      sec(med),
      `<= ${sec(GOAL[mode])}${Number.isFinite(med) ? (med <= GOAL[mode] ? ' met' : ' MISSED') : ''}`,
      rs.map((r) => sec(r.allow)).join('  ') + (rs.length < runs ? `  (${runs - rs.length} failed)` : ''),
      ['quick', 'console'].map((by) => [by, rs.filter((r) => r.by === by).length]).filter(([, c]) => c).map(([by, c]) => `${by} ${c}`).join(', '),
    ]);
  }
}
const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)) + 2);
console.log(head.map((h, c) => h.padEnd(widths[c])).join(''));
for (const r of rows) console.log(r.map((x, c) => x.padEnd(widths[c])).join(''));
console.log('(history: transcript messages — prompts, assistant blocks, tool results — and the bytes of the SSE replay up to the prompt)');
console.log(`(Allow of: quick = the page's boot script drew the prompt from the page's boot data before the console ran (index.html,`);
console.log(`__bridgeAsk), console = the console's dialog${QUICK ? '' : '; BENCH_QUICK=0: the quick answer was switched off'})`);

for (const k of kinds) {
  console.log(`\n== where the time goes: ${k.label} (median over runs of each milestone, ms from navigation start; precached files: ${k.precached})`);
  const names = Object.keys((k.results.cold[0] ?? k.results.warm[0])?.milestones ?? {});
  console.log(`  ${'milestone'.padEnd(38)}${'cold'.padStart(8)}${'warm'.padStart(8)}`);
  for (const name of names) {
    const c = median(k.results.cold.map((r) => r.milestones[name]));
    const w = median(k.results.warm.map((r) => r.milestones[name]));
    console.log(`  ${name.padEnd(38)}${msf(c).padStart(8)}${msf(w).padStart(8)}`);
  }
  for (const mode of ['cold', 'warm']) {
    const rs = k.results[mode];
    if (!rs.length) continue;
    const med = median(rs.map((r) => r.allow));
    const r = rs.find((x) => x.allow === med) ?? rs[0];
    const h = r.hist;
    console.log(`\n  requests of the median ${mode} run, those started before Allow (Allow at ${msf(r.allow)} ms; history ${h.messages} messages, ${h.events} events, ${h.bytes} bytes; ${r.streams} history stream(s); Node saw ${msf(r.nodeMs)} ms from goto):`);
    if (r.swBytes) console.log(`    the service worker fetched ${r.swBytes} bytes itself before Allow (on its own emulated link; on a phone they share one: ${sec(r.swBytes / network.downloadThroughput * 1000)} of 1.6 Mbps)`);
    console.log(`    ${'path'.padEnd(58)}${'start'.padStart(7)}${'headers'.padStart(9)}${'end'.padStart(8)}${'wire B'.padStart(10)}  how`);
    for (const w of r.waterfall) {
      const u = new URL(w.url);
      const p = (u.pathname + (u.search ? '?…' : '')).replace(/^\/console-[0-9a-f]+\//, '/console-…/');
      console.log(`    ${p.slice(0, 57).padEnd(58)}${msf(w.start).padStart(7)}${msf(w.headers).padStart(9)}${msf(w.end).padStart(8)}${String(w.bytes ?? 0).padStart(10)}  ${w.how}`);
    }
  }
}
if (failed) console.log('\nSome runs failed (see stderr).');
// The relays' pipes would keep Node running: exit (the exit handler stops them, removes the temp dirs).
process.exit(failed ? 1 : 0);
