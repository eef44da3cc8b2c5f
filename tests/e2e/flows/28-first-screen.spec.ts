// Flow 28 (issue 12): the first screen pre-rendered by the relay. A signed-in browser's page arrives with
// its session list in the boot shell (the service worker sends the login secret beside the cookie on
// navigations) and the same data as an inert JSON block; a hostile title stays text in it. With the wasm
// held back, the list is there and a tapped entry shows "Opening…" and takes the session's URL without a
// page load; once the console starts it opens that session and the shell is gone (one list, no reload).
import { test, expect } from '../support/fixtures';
import { expectLive, openConsole, press, tid } from '../support/console';

const HOSTILE = '<img src=x onerror="window.__pwned=1">Hostile & title';

/** The project's device (viewport, touch) for a context made here. */
function device(use: Record<string, any>) {
  return { viewport: use.viewport, isMobile: use.isMobile, hasTouch: use.hasTouch, deviceScaleFactor: use.deviceScaleFactor };
}

test('flow 28: the relay pre-renders the list; a tap before the wasm opens the session once it runs', async ({ page, backend, api, browser, workDir, shots }, testInfo) => {
  test.skip(backend.name !== 'demo', 'the page is the same for both backends');
  const hostile = await api.createSession({ cwd: workDir, title: HOSTILE });
  const other = await api.createSession({ cwd: workDir, title: 'plain title' });

  // Sign in; the service worker installs, takes the page and then adds the login secret to navigations.
  await openConsole(page, backend);
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
  await expect.poll(() => page.evaluate(() => !!navigator.serviceWorker.controller)).toBe(true);
  await expect
    .poll(() => page.evaluate(() => caches.open('bridge-device').then((c) => c.match('/__bridge/login')).then((r) => !!r)))
    .toBe(true);
  const nav = await page.goto(`${backend.base}/`);
  expect(nav!.fromServiceWorker(), 'the navigation went through the service worker').toBe(true);
  const html = await nav!.text();
  expect(html, 'the page holds the boot data').toContain('<script type="application/json" id="boot-data">');
  expect(html).toContain(`data-session-id="${hostile}"`);
  expect(html, 'the hostile title is escaped').not.toContain('<img src=x');
  await expect(tid(page, 'session-item').first()).toBeVisible();
  await expect(page.locator('#boot-shell')).toHaveCount(0);
  await expect(page.locator(`[data-session-id="${hostile}"]`), 'one list: the console replaced the shell').toHaveCount(1);

  // The same page with the wasm held back (another context: no service worker, the secret sent as the
  // worker would send it, so the wasm request can be routed).
  const secret = await page.evaluate(() => localStorage.getItem('bridge-console.login-secret'));
  expect(secret).toBeTruthy();
  const ctx = await browser.newContext({
    ...device(testInfo.project.use),
    storageState: await page.context().storageState(),
    serviceWorkers: 'block',
    extraHTTPHeaders: { 'x-bridge-login': secret! },
  });
  const held = await ctx.newPage();
  shots.set('held', held);
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  await held.route(/\/bridge-console_bg\.wasm$/, async (route) => {
    await released;
    await route.continue();
  });
  await held.goto(`${backend.base}/`);
  const shellItem = (id: string) => held.locator(`#boot-shell [data-testid="boot-session-item"][data-session-id="${id}"]`);
  await expect(shellItem(hostile)).toBeVisible();
  await expect(shellItem(hostile).locator('.session-name')).toHaveText(HOSTILE);
  expect(await held.evaluate(() => (window as any).__pwned ?? 0), 'no markup ran').toBe(0);
  await expect(held.locator('#boot-shell img')).toHaveCount(0);
  const boot = JSON.parse((await held.locator('#boot-data').textContent())!);
  expect(boot.me.role).toBe('controller');
  expect(boot.sessions.sessions.map((s: { id: string }) => s.id)).toEqual(expect.arrayContaining([hostile, other]));
  await expect(held.locator('[data-testid="session-item"]'), 'the console is not up').toHaveCount(0);

  // A tap before the console runs: "Opening…", the session's URL, no page load.
  await held.evaluate(() => ((window as any).__samePage = true));
  await press(shellItem(other).locator('a'));
  await expect(shellItem(other).getByTestId('boot-opening')).toHaveText('Opening…');
  await expect(held).toHaveURL(new RegExp(`/s/${other}$`));
  release();
  await expect(tid(held, 'transcript')).toBeVisible({ timeout: 30_000 });
  await expectLive(held);
  await expect(held.locator('#boot-shell')).toHaveCount(0);
  expect(await held.evaluate(() => (window as any).__samePage === true), 'no full page load').toBe(true);
  await expect(held).toHaveURL(new RegExp(`/s/${other}$`));
  // On a desktop the list shows beside the session, once, with the opened entry current.
  if (!testInfo.project.use.isMobile) {
    await expect(held.locator(`[data-testid="session-item"][data-session-id="${other}"] a`)).toHaveAttribute('aria-current', 'page');
    await expect(held.locator(`[data-testid="session-item"][data-session-id="${hostile}"]`)).toHaveCount(1);
    await expect(held.locator(`[data-testid="session-item"][data-session-id="${hostile}"] .session-name`)).toHaveText(HOSTILE);
  }

  // Signed out: no list in the page.
  const anon = await browser.newContext({ ...device(testInfo.project.use), serviceWorkers: 'block' });
  const r = await (await anon.newPage()).goto(`${backend.base}/`);
  const anonHtml = await r!.text();
  expect(anonHtml).not.toContain('id="boot-data"');
  expect(anonHtml).not.toContain('boot-session-item"');
  await anon.close();
});
