// Flow 31 (issue 29): a long session opens on its latest events. A session of 260 answers ending in a
// waiting Bash prompt (`e2e-many`), opened afresh at /s/<id> (as a notification opens it): the stream
// starts after its latest events and before the waiting prompt (`history-partial`), the transcript
// holds those rows only, the dialog takes the Allow and the turn ends; "Show all" (`history-show-all`)
// opens it again whole — every row, the first answer at the top. Demo projects (the subject is the
// console's opening, not the CLI).
import { test, expect } from '../support/fixtures';
import { assistantTexts, dialog, openSession, press, scrollTranscriptToTop, sendMessage, tid } from '../support/console';

test('flow 31: a long session opens on its latest events and its waiting prompt; Show all opens it whole', async ({ page, backend, api, workDir, uid }) => {
  test.skip(backend.name !== 'demo', 'a scripted long session (demo agent)');
  const sid = await api.createSession({ cwd: workDir, title: `flow 31 ${uid}` });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-many ${uid}`);
  await expect(dialog(page)).toBeVisible({ timeout: 60_000 });
  // Opened whole the first time (the list knew it was short): no banner.
  await expect(tid(page, 'history-partial')).toHaveCount(0);
  const whole = Number(await tid(page, 'transcript').getAttribute('data-rows'));
  expect(whole).toBeGreaterThan(260);

  // Afresh, as a notification opens it.
  await openSession(page, backend, sid);
  await expect(tid(page, 'history-partial')).toBeVisible();
  await expect(dialog(page)).toBeVisible();
  const rows = Number(await tid(page, 'transcript').getAttribute('data-rows'));
  expect(rows, 'only the latest events are applied').toBeLessThan(whole);
  expect(rows).toBeGreaterThan(0);
  await expect(assistantTexts(page).filter({ hasText: 'Block 260 of a long session.' })).toHaveCount(1);
  await press(tid(page, 'permission-allow'));
  await expect(dialog(page)).toBeHidden();
  await expect(assistantTexts(page).last()).toContainText('E2E-MANY-ALLOWED');

  await press(tid(page, 'history-show-all'));
  await expect(tid(page, 'history-partial')).toHaveCount(0);
  await expect.poll(async () => Number(await tid(page, 'transcript').getAttribute('data-rows'))).toBeGreaterThan(whole);
  await scrollTranscriptToTop(page);
  await expect(assistantTexts(page).filter({ hasText: 'Block 1 of a long session.' }).first()).toBeVisible();
});
