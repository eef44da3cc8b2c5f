// Flow 32 (issue 29): a notification opens the session its prompt waits in, and the dialog takes the tap
// before the session has loaded. A signed-in browser (login cookie and its login secret, as the service
// worker sends them on a navigation) opens /s/<id> of a session waiting on a Bash permission; the session
// part and the live connection's part are held back (routed, never answered until released), so the
// session view, its history and its stream cannot be what shows the dialog: the relay's page carries the
// waiting prompt, the page preloads the dialogs part, and that part alone draws it. Allow is tapped there; the relay records the answer,
// the first window sees its own dialog go (answered elsewhere), and once the parts are released the
// session view comes up with the turn going on and no second dialog for the answered prompt.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, expect } from '../support/fixtures';
import { dialog, expectLive, openSession, press, sendMessage, tid, toolCalls } from '../support/console';

const SHOTS = path.resolve(__dirname, '../artifacts/screenshots');

/** The project's device (viewport, touch) for a context made here. */
function device(use: Record<string, any>) {
  return { viewport: use.viewport, isMobile: use.isMobile, hasTouch: use.hasTouch, deviceScaleFactor: use.deviceScaleFactor };
}

test('flow 32: the waiting prompt takes the tap before the session has loaded', async ({ page, backend, api, browser, workDir, uid, shots }, testInfo) => {
  const sid = await api.createSession({ cwd: workDir, title: `flow 32 ${uid}` });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-deny clean up ${uid}`);
  await expect(dialog(page)).toBeVisible({ timeout: 60_000 });
  const ask = (await api.events(sid)).filter((e) => e.payload.type === 'control_request' && e.payload.request?.subtype === 'can_use_tool').pop();
  expect(ask, 'the session waits on a permission').toBeTruthy();
  const rid = ask!.payload.request_id as string;
  await expect(dialog(page)).toHaveAttribute('data-request-id', rid);

  // The login secret the service worker would send beside the cookie.
  await expect.poll(() => page.evaluate(() => localStorage.getItem('bridge-console.login-secret'))).toBeTruthy();
  const secret = (await page.evaluate(() => localStorage.getItem('bridge-console.login-secret')))!;
  const ctx = await browser.newContext({
    ...device(testInfo.project.use),
    storageState: await page.context().storageState(),
    serviceWorkers: 'block',
    extraHTTPHeaders: { 'x-bridge-login': secret },
  });
  const phone = await ctx.newPage();
  shots.set('prompt-first', phone);
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const held: string[] = [];
  await phone.route(/\/split_(session|live)\.wasm$/, async (route) => {
    held.push(new URL(route.request().url()).pathname);
    await released;
    await route.continue();
  });
  const nav = await phone.goto(`${backend.base}/s/${sid}`);
  const html = await nav!.text();
  expect(html, 'the page carries the waiting prompt').toContain(`"request_id":"${rid}"`);

  // The page preloads the dialogs part (its own file and the chunks it shares) while the main module loads.
  await expect(phone.locator('link[rel="preload"][href$="/split_dialogs.wasm"]'), 'the dialogs part is preloaded').toHaveCount(1);

  // The dialog, drawn by the dialogs part while the session's parts are held back.
  const early = dialog(phone);
  await expect(early).toBeVisible({ timeout: 30_000 });
  await expect(early).toHaveAttribute('data-request-id', rid);
  await expect(early).toHaveAttribute('data-tool-name', 'Bash');
  await expect(early).toContainText('touch e2e-denied.txt');
  await expect(tid(phone, 'session-loading'), 'the session view has not loaded').toBeVisible();
  await expect(tid(phone, 'transcript')).toHaveCount(0);
  await expect.poll(() => held.length, 'the session part was asked for (and held)').toBeGreaterThan(0);
  const allow = tid(phone, 'permission-allow');
  await expect(allow).toBeEnabled();
  fs.mkdirSync(SHOTS, { recursive: true });
  await phone.screenshot({ path: path.join(SHOTS, `32-prompt-first--early-dialog--${testInfo.project.name}.png`) });
  await press(allow);
  await expect(early).toBeHidden();

  // The relay has the answer, from this page; the first window's dialog goes.
  await expect
    .poll(async () => {
      const answer = (await api.events(sid)).find((e) => e.source === 'client' && e.payload.type === 'control_response' && e.payload.response?.request_id === rid);
      return answer?.payload.response?.response?.behavior ?? null;
    })
    .toBe('allow');
  await expect(dialog(page)).toBeHidden();
  // A page without a waiting prompt preloads nothing.
  expect(await page.locator('link[rel="preload"][href$="/split_dialogs.wasm"]').count()).toBe(0);

  // The session comes up behind it, with no second dialog for the answered prompt.
  release();
  await expect(tid(phone, 'transcript')).toBeVisible({ timeout: 30_000 });
  await expectLive(phone);
  await expect(toolCalls(phone, 'Bash').last()).not.toHaveAttribute('data-status', 'pending-permission');
  await expect(dialog(phone)).toHaveCount(0);
  expect((await api.session(sid)).pending_permissions ?? 0, 'nothing left waiting').toBe(0);
});
