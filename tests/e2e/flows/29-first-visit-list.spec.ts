// Flow 29 (issue 12): the session list painted on a first visit too. A fresh browser (no service worker,
// no cookie) opens a `#login=` link with the wasm held back: index.html's boot script takes the code out
// of the URL at once, signs in with it (X-Bridge-First-Screen: the login answer carries the relay's
// rendered list, so the page is not fetched a second time) and moves the list into the shell (a hostile
// title stays text); against a relay whose answer has no list, it fetches the page with the new secret. Released, the console is signed in from
// that one exchange (single-use codes: a second would fail), lists and opens sessions live, and the secret
// reaches the service worker, so a reload is pre-rendered by the relay as for any returning visitor (one
// whose worker is gone gets the list from the script with the stored secret). A used code shows the
// console's usual error; an observer's link paints no list, the observer switch is left to the console.
import type { Browser, Page, Request, TestInfo } from '@playwright/test';
import { test, expect, type RelayApi } from '../support/fixtures';
import { expectLive, press, tid } from '../support/console';

const HOSTILE = '<img src=x onerror="window.__pwned=1">Hostile & title';

/** A fresh context with the project's device (viewport, touch): no cookie, storage or service worker. */
async function freshPage(browser: Browser, testInfo: TestInfo): Promise<Page> {
  const use = testInfo.project.use;
  const ctx = await browser.newContext({ viewport: use.viewport, isMobile: use.isMobile, hasTouch: use.hasTouch, deviceScaleFactor: use.deviceScaleFactor });
  return ctx.newPage();
}

/** Holds the console's wasm back until the returned function is called. */
async function holdWasm(page: Page): Promise<() => void> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  await page.route(/\/bridge-console_bg\.wasm$/, async (route) => {
    await released;
    await route.continue();
  });
  return release;
}

/** The login requests the page makes (`POST /v1/auth/login`). */
function countLogins(page: Page): Request[] {
  const seen: Request[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/v1/auth/login') seen.push(r);
  });
  return seen;
}

/** The GETs of the page at `path` (the navigation and any fetch of it). */
function countPageGets(page: Page, path: string): Request[] {
  const seen: Request[] = [];
  page.on('request', (r) => {
    if (r.method() === 'GET' && new URL(r.url()).pathname === path) seen.push(r);
  });
  return seen;
}

/** A fresh single-use login code (`POST /v1/auth/login-codes` with the controller token). */
async function loginCode(api: RelayApi): Promise<string> {
  const r = await api.ctx.post('/v1/auth/login-codes');
  expect(r.status(), await r.text()).toBe(201);
  return (await r.json()).code as string;
}

test('flow 29: a first visit through a login link paints the list before the wasm, signs in once', async ({ backend, api, browser, workDir, shots }, testInfo) => {
  test.skip(backend.name !== 'demo', 'the page is the same for both backends');
  const hostile = await api.createSession({ cwd: workDir, title: HOSTILE });
  const other = await api.createSession({ cwd: workDir, title: 'plain title' });
  const code = await loginCode(api);

  const first = await freshPage(browser, testInfo);
  shots.set('first', first);
  const logins = countLogins(first);
  const pageGets = countPageGets(first, '/');
  const release = await holdWasm(first);
  await first.goto(`${backend.base}/#login=${encodeURIComponent(code)}&theme=dark`);
  // The code leaves the address bar at once (before the wasm), the switches stay.
  await expect(first).not.toHaveURL(/login=/);
  expect(new URL(first.url()).hash).toBe('#theme=dark');
  const shellItem = (id: string) => first.locator(`#boot-shell [data-testid="boot-session-item"][data-session-id="${id}"]`);
  await expect(shellItem(hostile)).toBeVisible();
  await expect(shellItem(hostile).locator('.session-name')).toHaveText(HOSTILE);
  await expect(shellItem(other)).toBeVisible();
  expect(await first.evaluate(() => (window as any).__pwned ?? 0), 'no markup ran').toBe(0);
  await expect(first.locator('#boot-shell img')).toHaveCount(0);
  const boot = JSON.parse((await first.locator('#boot-data').textContent())!);
  expect(boot.me.role).toBe('controller');
  await expect(first.locator('[data-testid="session-item"]'), 'the console is not up').toHaveCount(0);
  expect(await first.evaluate(() => localStorage.getItem('bridge-console.login-secret')), 'the secret is kept').toBeTruthy();
  // The list came with the login answer: the page was fetched once (the navigation), not again.
  expect(logins[0].headers()['x-bridge-first-screen'], 'the script asks for the first screen').toBe('1');
  expect(pageGets.map((r) => r.resourceType()), 'no second GET of the page').toEqual(['document']);

  // The console: signed in by the script's exchange, no second one (the code is single-use).
  release();
  const item = first.locator(`[data-testid="session-item"][data-session-id="${hostile}"]`);
  await expect(item).toBeVisible({ timeout: 30_000 });
  await expect(first.locator('#boot-shell')).toHaveCount(0);
  await expect(tid(first, 'login-screen')).toHaveCount(0);
  await expect(item.locator('.session-name')).toHaveText(HOSTILE);
  expect(logins.map((r) => r.url()), 'one login request').toHaveLength(1);
  await press(item.locator('a'));
  await expect(tid(first, 'transcript')).toBeVisible({ timeout: 30_000 });
  await expectLive(first);
  expect(logins, 'still one login request').toHaveLength(1);

  // The secret reached the service worker: a reload is pre-rendered by the relay as for any returning visitor.
  await expect.poll(() => first.evaluate(() => !!navigator.serviceWorker.controller), { timeout: 30_000 }).toBe(true);
  await expect
    .poll(() => first.evaluate(() => caches.open('bridge-device').then((c) => c.match('/__bridge/login')).then((r) => !!r)))
    .toBe(true);
  const nav = await first.goto(`${backend.base}/`);
  expect(nav!.fromServiceWorker(), 'the navigation went through the service worker').toBe(true);
  expect(await nav!.text(), 'the page holds the boot data').toContain('<script type="application/json" id="boot-data">');
  await expect(item).toBeVisible();
  await expect(tid(first, 'login-screen')).toHaveCount(0);
  expect(logins, 'no login on a warm visit').toHaveLength(1);

  // A returning browser whose service worker is gone (its cookie and stored secret kept): the navigation is
  // not pre-rendered, the script fetches the list with the stored secret; no login.
  const use = testInfo.project.use;
  const back = await (
    await browser.newContext({
      viewport: use.viewport,
      isMobile: use.isMobile,
      hasTouch: use.hasTouch,
      deviceScaleFactor: use.deviceScaleFactor,
      storageState: await first.context().storageState(),
      serviceWorkers: 'block',
    })
  ).newPage();
  shots.set('returning', back);
  const backLogins = countLogins(back);
  const releaseBack = await holdWasm(back);
  const backNav = await back.goto(`${backend.base}/`);
  expect(await backNav!.text(), 'the navigation is the static page').not.toContain('id="boot-data"');
  await expect(back.locator(`#boot-shell [data-testid="boot-session-item"][data-session-id="${other}"]`)).toBeVisible();
  releaseBack();
  await expect(back.locator(`[data-testid="session-item"][data-session-id="${other}"]`)).toBeVisible({ timeout: 30_000 });
  await expect(back.locator('#boot-shell')).toHaveCount(0);
  expect(backLogins).toHaveLength(0);
  await back.context().close();

  // A relay whose login answer carries no first screen (an older one): the script fetches the page with
  // the new secret, as before, and paints the same list.
  const old = await freshPage(browser, testInfo);
  shots.set('old-relay', old);
  await old.route(/\/v1\/auth\/login$/, async (route) => {
    const r = await route.fetch();
    const body = await r.json();
    expect(typeof body.first_screen, 'asked, the answer has the list').toBe('string');
    delete body.first_screen;
    await route.fulfill({ response: r, json: body });
  });
  const oldGets = countPageGets(old, '/');
  const releaseOld = await holdWasm(old);
  await old.goto(`${backend.base}/#login=${encodeURIComponent(await loginCode(api))}`);
  await expect(old.locator(`#boot-shell [data-testid="boot-session-item"][data-session-id="${hostile}"]`)).toBeVisible();
  expect(oldGets.map((r) => r.resourceType()), 'the page fetched again').toEqual(['document', 'fetch']);
  releaseOld();
  await expect(old.locator(`[data-testid="session-item"][data-session-id="${hostile}"]`)).toBeVisible({ timeout: 30_000 });
  await old.context().close();

  // The same code again (used): nothing is painted but the shell, then the console's usual error.
  const used = await freshPage(browser, testInfo);
  shots.set('used', used);
  const usedLogins = countLogins(used);
  const releaseUsed = await holdWasm(used);
  await used.goto(`${backend.base}/#login=${encodeURIComponent(code)}`);
  await expect(used).not.toHaveURL(/login=/);
  await expect.poll(() => usedLogins.length).toBe(1);
  await used.waitForTimeout(500);
  await expect(used.locator('[data-testid="boot-session-item"]'), 'no list for a failed login').toHaveCount(0);
  await expect(used.locator('#boot-list')).toHaveText('Loading sessions…');
  releaseUsed();
  await expect(tid(used, 'login-screen')).toBeVisible({ timeout: 30_000 });
  await expect(tid(used, 'login-screen').getByRole('alert')).toContainText(/The login link did not work \(.*already used.*\(HTTP 401\)\)/);
  expect(usedLogins, 'the console did not try the code again').toHaveLength(1);
  await used.context().close();

  // An observer's link (an observer token): the script signs in with it, the relay renders no list for an
  // observer, so only the shell shows until the console, read-only as before.
  const { console_url } = await api.observerToken(hostile);
  const obs = await freshPage(browser, testInfo);
  shots.set('observer', obs);
  const obsLogins = countLogins(obs);
  const releaseObs = await holdWasm(obs);
  await obs.goto(console_url.includes('/s/') ? console_url : console_url.replace('/#', `/s/${hostile}#`));
  await expect(obs).not.toHaveURL(/login=/);
  await expect.poll(() => obsLogins.length).toBe(1);
  await obs.waitForTimeout(500);
  await expect(obs.locator('[data-testid="boot-session-item"]')).toHaveCount(0);
  releaseObs();
  await expect(tid(obs, 'observer-banner')).toBeVisible({ timeout: 30_000 });
  await expect(tid(obs, 'transcript')).toBeVisible();
  expect(obsLogins, 'one login request').toHaveLength(1);
  await obs.context().close();

  // The observer switch (`controls=observer`) is left to the console, as before: the code stays until the
  // wasm runs, no list is painted.
  const sw = await freshPage(browser, testInfo);
  shots.set('controls-observer', sw);
  const swLogins = countLogins(sw);
  const releaseSw = await holdWasm(sw);
  await sw.goto(`${backend.base}/s/${hostile}#login=${encodeURIComponent(await loginCode(api))}&controls=observer`);
  await sw.waitForTimeout(500);
  expect(swLogins, 'the page did not sign in').toHaveLength(0);
  await expect(sw).toHaveURL(/login=/);
  await expect(sw.locator('[data-testid="boot-session-item"]')).toHaveCount(0);
  releaseSw();
  await expect(tid(sw, 'observer-banner')).toBeVisible({ timeout: 30_000 });
  await expect(sw).not.toHaveURL(/login=/);
  expect(swLogins).toHaveLength(1);
  await sw.context().close();
});
