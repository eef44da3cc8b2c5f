// Flow 33 (issue 29): the quick answer — a notification's page answers its prompt before the console's
// wasm has arrived. A signed-in browser (login cookie and its login secret, as the service worker sends
// them on a navigation) opens /s/<id> of a session waiting on a Bash permission with the console's main
// module held back (routed, never answered until released): index.html's boot script draws the waiting
// prompt from the page's boot data (`boot-prompt`: the tool, its command as text), and Deny or Allow there
// posts the answer itself. The relay records it, and once the module is released the console comes up
// with no dialog for the answered prompt. On the demo agent a prompt whose command and description hold
// markup shows them as text (nothing of it runs or becomes an element), More… leaves it to the console's
// dialog (nothing sent), and Allow sends the input as it was.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page, TestInfo } from '@playwright/test';
import { test, expect } from '../support/fixtures';
import { dialog, expectLive, openSession, press, sendMessage, tid, toolCalls } from '../support/console';

const SHOTS = path.resolve(__dirname, '../artifacts/screenshots');

/** /s/<sid> in a new signed-in context of the project's device, with the main wasm module held. */
async function openHeld(browser: Browser, from: Page, testInfo: TestInfo, url: string) {
  const secret = (await from.evaluate(() => localStorage.getItem('bridge-console.login-secret')))!;
  const use = testInfo.project.use;
  const ctx = await browser.newContext({
    viewport: use.viewport,
    isMobile: use.isMobile,
    hasTouch: use.hasTouch,
    deviceScaleFactor: use.deviceScaleFactor,
    storageState: await from.context().storageState(),
    serviceWorkers: 'block',
    extraHTTPHeaders: { 'x-bridge-login': secret },
  });
  await ctx.addInitScript(() => {
    (window as any).__pwnedCalls = [];
    (window as any).__pwned = (x: unknown) => (window as any).__pwnedCalls.push(x);
  });
  const page = await ctx.newPage();
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let held = 0;
  await page.route(/\/bridge-console_bg\.wasm$/, async (route) => {
    held++;
    await released;
    await route.continue();
  });
  await page.goto(url);
  return { page, release, held: () => held, close: () => ctx.close() };
}

/** The session's newest `can_use_tool` request. */
async function waitingAsk(api: any, sid: string) {
  const ask = (await api.events(sid)).filter((e: any) => e.payload.type === 'control_request' && e.payload.request?.subtype === 'can_use_tool').pop();
  expect(ask, 'the session waits on a permission').toBeTruthy();
  return ask.payload as { request_id: string; request: { input: Record<string, unknown> } };
}

/** The answer the relay recorded for `rid` (its `response.response`), once there. */
async function answerOf(api: any, sid: string, rid: string) {
  let got: any = null;
  await expect
    .poll(async () => {
      const a = (await api.events(sid)).find((e: any) => e.source === 'client' && e.payload.type === 'control_response' && e.payload.response?.request_id === rid);
      got = a?.payload.response?.response ?? null;
      return got?.behavior ?? null;
    })
    .not.toBeNull();
  return got;
}

test('flow 33: the page a notification opens answers its prompt before the console has loaded', async ({ page, backend, api, browser, workDir, uid }, testInfo) => {
  const sid = await api.createSession({ cwd: workDir, title: `flow 33 ${uid}` });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-deny clean up ${uid}`);
  await expect(dialog(page)).toBeVisible({ timeout: 60_000 });
  const ask = await waitingAsk(api, sid);
  await expect.poll(() => page.evaluate(() => localStorage.getItem('bridge-console.login-secret'))).toBeTruthy();

  // Deny, before the console's module has arrived.
  const one = await openHeld(browser, page, testInfo, `${backend.base}/s/${sid}`);
  const quick = tid(one.page, 'boot-prompt');
  await expect(quick).toBeVisible({ timeout: 30_000 });
  await expect(quick).toHaveAttribute('data-request-id', ask.request_id);
  await expect(quick).toHaveAttribute('data-tool-name', 'Bash');
  await expect(quick.locator('h2')).toHaveText('Allow Bash?');
  await expect(tid(one.page, 'boot-prompt-input')).toHaveText('touch e2e-denied.txt');
  expect(one.held(), 'the main module was asked for (and held)').toBeGreaterThan(0);
  expect(await one.page.evaluate(() => document.getElementById('boot-shell')?.hasAttribute('data-console')), 'the console has not started').toBe(false);
  await press(tid(one.page, 'boot-prompt-deny'));
  await expect(quick).toBeHidden();
  const denied = await answerOf(api, sid, ask.request_id);
  expect(denied.behavior).toBe('deny');
  expect(denied.message).toBe('The user denied this tool call.');
  // The first window's dialog goes (answered elsewhere); the console, once in, shows none for it.
  await expect(dialog(page)).toBeHidden();
  one.release();
  await expect(tid(one.page, 'transcript')).toBeVisible({ timeout: 30_000 });
  await expectLive(one.page);
  await expect(toolCalls(one.page, 'Bash').last()).not.toHaveAttribute('data-status', 'pending-permission');
  await expect(dialog(one.page)).toHaveCount(0);
  await expect(tid(one.page, 'boot-prompt')).toHaveCount(0);
  await one.close();

  if (backend.name !== 'demo') return;
  // Markup in the prompt stays text; Allow sends the input as the CLI asked it.
  await expect.poll(async () => (await api.session(sid)).state).not.toBe('requires_action');
  await sendMessage(page, `e2e-quick-ask ${uid}`);
  await expect(dialog(page)).toBeVisible({ timeout: 60_000 });
  const hostile = await waitingAsk(api, sid);
  expect(hostile.request_id).not.toBe(ask.request_id);
  // More… leaves the prompt to the console's dialog (the input editor, rules, a reason): nothing is sent.
  const more = await openHeld(browser, page, testInfo, `${backend.base}/s/${sid}`);
  await expect(tid(more.page, 'boot-prompt')).toHaveAttribute('data-request-id', hostile.request_id, { timeout: 30_000 });
  await press(tid(more.page, 'boot-prompt-more'));
  await expect(tid(more.page, 'boot-prompt')).toHaveCount(0);
  more.release();
  await expect(dialog(more.page)).toHaveAttribute('data-request-id', hostile.request_id, { timeout: 30_000 });
  await expect(tid(more.page, 'boot-prompt')).toHaveCount(0);
  expect((await api.session(sid)).pending_permissions, 'still waiting').toBe(1);
  await more.close();

  const two = await openHeld(browser, page, testInfo, `${backend.base}/s/${sid}`);
  const q2 = tid(two.page, 'boot-prompt');
  await expect(q2).toHaveAttribute('data-request-id', hostile.request_id, { timeout: 30_000 });
  await expect(tid(two.page, 'boot-prompt-input')).toHaveText(`echo '<img src=x onerror="window.__pwned(1)">' > e2e-quick.txt`);
  await expect(q2.locator('.dialog-desc')).toHaveText('Write <b>markup</b> to a file');
  await expect(q2.locator('img, b')).toHaveCount(0);
  fs.mkdirSync(SHOTS, { recursive: true });
  await two.page.screenshot({ path: path.join(SHOTS, `33-quick-answer--${testInfo.project.name}.png`) });
  await press(tid(two.page, 'boot-prompt-allow'));
  await expect(q2).toBeHidden();
  const allowed = await answerOf(api, sid, hostile.request_id);
  expect(allowed.behavior).toBe('allow');
  expect(allowed.updatedInput).toEqual(hostile.request.input);
  expect(await two.page.evaluate(() => (window as any).__pwnedCalls), 'nothing of the prompt ran').toEqual([]);
  two.release();
  await expect(two.page.getByText('E2E-QUICK-ALLOWED')).toBeVisible({ timeout: 30_000 });
  await expect(dialog(two.page)).toHaveCount(0);
  expect(await two.page.evaluate(() => (window as any).__pwnedCalls), 'nothing of the prompt ran').toEqual([]);
  await two.close();
});
