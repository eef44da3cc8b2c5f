// The client package in Chromium: a plain HTML page (no Leptos, no bundler) served by the relay from
// a temporary --static-dir next to a copy of pkg/ (so it is same-origin and the login cookie is what
// authenticates) does a demo turn over SSE and over WebSocket. Drives /usr/bin/chromium with
// playwright-core from tests/e2e/node_modules (installed by scripts/setup.sh --test).
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { PKG, ROOT, expectedSeqs, relayEvents, startRelay } from './support.mjs';

const PLAYWRIGHT = join(ROOT, 'tests/e2e/node_modules/playwright-core');
const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';

let relay;
let browser;
let site;

before(async () => {
  assert.ok(existsSync(PLAYWRIGHT), 'playwright-core is missing: run scripts/setup.sh --test');
  site = mkdtempSync(join(tmpdir(), 'bridge-pkg-site-'));
  cpSync(join(ROOT, 'tests/pkg/page'), site, { recursive: true });
  cpSync(PKG, join(site, 'pkg'), {
    recursive: true,
    filter: (src) => !src.includes(`${PKG}/bench`) && !src.endsWith('.tgz'),
  });
  assert.ok(readdirSync(join(site, 'pkg')).includes('bridge_console_client_bg.wasm'), 'run scripts/pack.sh first');
  relay = await startRelay({ args: ['--static-dir', site] });
  const { chromium } = createRequire(import.meta.url)(PLAYWRIGHT);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
});

after(async () => {
  await browser?.close();
  await relay?.stop();
  if (site) rmSync(site, { recursive: true, force: true });
});

test('a plain page imports pkg/ and does a demo turn over SSE and WebSocket, with the login cookie', async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  await page.goto(`${relay.baseUrl}/index.html?transports=sse,ws#login=${relay.token}`);
  await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 60_000 });
  const result = await page.evaluate(() => window.__result);
  assert.equal(result.ok, true, `the page failed: ${result.error}\n${problems.join('\n')}`);
  // No cookie yet and no token: the relay refused, and the Error said so; so does a bad login.
  assert.match(result.beforeLogin, /^createSession: the relay answered HTTP 401/);
  assert.match(result.badLogin, /^login: the relay answered HTTP 401/);
  assert.equal(result.role, result.loginSecret === null ? null : 'controller');
  // A relay that pairs the cookie with a login secret: kept where the console keeps it.
  assert.equal(result.kept, result.loginSecret);
  // The token left the address bar; the cookie is HttpOnly.
  assert.ok(!page.url().includes(relay.token));
  assert.equal(await page.evaluate(() => document.cookie), '');
  const cookies = await page.context().cookies();
  assert.ok(cookies.some((c) => c.name === 'bridge_session' && c.httpOnly), 'the login cookie is set');

  assert.deepEqual(result.turns.map((t) => t.transport), ['sse', 'ws']);
  for (const turn of result.turns) {
    assert.notEqual(turn.original, turn.command);
    assert.ok(turn.toolResult.startsWith(`$ ${turn.command}`), `${turn.transport}: ${turn.toolResult}`);
    assert.equal(turn.resultSubtype, 'success');
    assert.deepEqual(turn.states.filter((s) => s !== 'offline'), ['live'], 'live at once, never reconnecting');
    const offline = turn.states.indexOf('offline');
    assert.ok(offline === -1 || offline === turn.states.length - 1, `offline only after close: ${turn.states}`);
    for (const c of ['system', 'assistant', 'stream_event', 'can_use_tool', 'user', 'result']) {
      assert.ok(turn.classes.includes(c), `${turn.transport}: ${c} in ${turn.classes}`);
    }
    // Durable messages: in order, once each, exactly the relay's log (own posts excepted).
    const events = await relayEvents(relay.baseUrl, relay.token, turn.sessionId);
    const last = Math.max(...turn.seqs);
    assert.deepEqual(turn.seqs, expectedSeqs(events).filter((s) => s <= last));
  }
  const shown = await page.locator('[data-testid=log]').textContent();
  assert.match(shown, /\$ echo edited-in-chromium-sse/);
  assert.match(shown, /\$ echo edited-in-chromium-ws/);
  assert.deepEqual(problems.filter((p) => !p.includes('401')), []);
  await page.close();
});
