// Flow 34: notifications the page shows itself (where Web Push cannot work and the person turned them
// on in the Notifications panel). With the page hidden, a permission prompt in the open session shows
// one notification (one tag) — through the service worker when one is active, else `new Notification` — and
// its code comes from the lazily loaded settings part, which the page has not loaded before: the
// notification waits for that part and must still appear. With the page visible nothing is shown.
import { test, expect } from '../support/fixtures';
import { dialog, openSession, sendMessage, waitForTurns } from '../support/console';

test('flow 34: a prompt in a hidden page shows an in-page notification', async ({ page, backend, api, workDir, uid }, testInfo) => {
  test.skip(testInfo.project.use.isMobile === true, 'one run is enough: the desktop profile');
  await page.context().grantPermissions(['notifications'], { origin: backend.base });
  await page.addInitScript(() => {
    const w = window as any;
    localStorage.setItem('bridge-console.in-page-notifications', '1');
    // The page says it is hidden while `__hidden` is true (a tab in the background).
    w.__hidden = false;
    Object.defineProperty(Document.prototype, 'hidden', { configurable: true, get: () => w.__hidden });
    w.__shown = [];
    const record = (how: string, title: string, opts: any) => w.__shown.push({ how, title, body: opts?.body ?? '', tag: opts?.tag ?? '' });
    const Native = w.Notification;
    const Spy: any = function (title: string, opts?: any) {
      record('page', title, opts);
      return new Native(title, opts);
    };
    Spy.prototype = Native.prototype;
    Object.defineProperty(Spy, 'permission', { get: () => Native.permission });
    Spy.requestPermission = Native.requestPermission.bind(Native);
    w.Notification = Spy;
    const show = ServiceWorkerRegistration.prototype.showNotification;
    ServiceWorkerRegistration.prototype.showNotification = function (title: string, opts?: any) {
      record('worker', title, opts);
      return show.call(this, title, opts);
    };
  });

  const sid = await api.createSession({ cwd: workDir, title: `flow 34 ${uid}` });
  await openSession(page, backend, sid);
  const shown = () => page.evaluate(() => (window as any).__shown as Array<{ how: string; title: string; body: string; tag: string }>);

  // Visible page: the prompt is in the page, no notification.
  await sendMessage(page, `e2e-deny first ${uid}`);
  await expect(dialog(page)).toBeVisible();
  await page.waitForTimeout(500);
  expect(await shown()).toEqual([]);
  await page.getByTestId('permission-allow').click();
  await expect(dialog(page)).toBeHidden();
  await waitForTurns(page, 1);

  // Hidden page: the next prompt shows this session's notification. Two paths may show it — the open
  // session's prompt and the session list's "newly waiting" — both under the session's one tag, so
  // the second replaces the first: one notification on the screen. (Other flows share the relay: a
  // session of theirs that starts waiting now is notified too, under its own tag.)
  await page.evaluate(() => {
    (window as any).__hidden = true;
  });
  await sendMessage(page, `e2e-deny second ${uid}`);
  await expect(dialog(page)).toBeVisible();
  const tag = `bridge:${sid}:inpage`;
  const mine = async () => (await shown()).filter((n) => n.tag === tag);
  await expect.poll(async () => (await mine()).length, { timeout: 10_000 }).toBeGreaterThan(0);
  await page.waitForTimeout(1_000);
  const all = await shown();
  for (const n of all) {
    expect(n.title, JSON.stringify(all)).toBe('Claude needs you');
    expect(n.body.length).toBeGreaterThan(0);
    expect(n.tag).toMatch(/^bridge:cse_[0-9a-f]+:inpage$/);
  }
  const bodies = (await mine()).map((n) => n.body);
  expect(bodies.some((b) => b.includes('touch') || b.includes(`flow 34 ${uid}`)), JSON.stringify(bodies)).toBe(true);
});
