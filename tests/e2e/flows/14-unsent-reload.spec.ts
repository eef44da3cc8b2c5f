// Flow 14: a message sent while its POST cannot get through survives a reload: after the reload it is shown
// again, after the history, still pending; once POSTs get through it is delivered exactly once and answered.
import { test, expect } from '../support/fixtures';
import { assistantTexts, expectLive, openSession, sendMessage, snapshot, tid, waitForTurns } from '../support/console';

test('flow 14: a message that could not be sent survives a reload and is delivered once', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 14' });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-basic first ${uid}`);
  await waitForTurns(page, 1);

  // POSTs to the session fail from now on (the stream still works: the page stays "live").
  const blocked = async (route: import('@playwright/test').Route) => {
    if (route.request().method() === 'POST') await route.abort('connectionreset');
    else await route.continue();
  };
  await page.route('**/v1/code/sessions/*/events', blocked);
  const text = `e2e-basic unsent ${uid}`;
  await sendMessage(page, text);
  const pending = page.locator('[data-testid="message"][data-role="user"]').filter({ hasText: text });
  await expect(pending.locator('[data-send-state]')).not.toHaveAttribute('data-send-state', 'confirmed');

  await page.reload();
  await expect(tid(page, 'transcript')).toBeVisible();
  await expectLive(page);
  // Back, after the history, not yet delivered.
  await expect(pending).toHaveCount(1);
  const rows = await snapshot(page);
  expect(rows[rows.length - 1].text).toContain(text);
  expect((await api.events(sid)).some((e) => JSON.stringify(e.payload).includes(text)), 'not delivered yet').toBe(false);

  await page.unroute('**/v1/code/sessions/*/events', blocked);
  await waitForTurns(page, 2, 60_000);
  await expect(assistantTexts(page).last()).toContainText('E2E-BASIC-DONE');
  const copies = (await api.events(sid)).filter((e) => e.payload.type === 'user' && JSON.stringify(e.payload.message?.content ?? '').includes(text));
  const uuids = new Set(copies.map((e) => e.payload.uuid));
  expect(uuids.size, 'delivered once (one uuid)').toBe(1);
  await expect(pending).toHaveCount(1);
  const left = await page.evaluate((k) => localStorage.getItem(k), `bridge-console.unsent.${sid}`);
  expect(left, 'nothing left unsent').toBeNull();
});
