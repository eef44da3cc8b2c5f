// Flow 31 (issue 29): a long session opens on its latest events. A session of 260 answers ending in a
// waiting Bash prompt (`e2e-many`), opened afresh at /s/<id> (as a notification opens it): the stream
// starts after its latest events and before the waiting prompt (`history-partial`): the last answers
// are there, the first ones are not; the dialog takes the Allow and the turn ends; "Show all"
// (`history-show-all`) opens it again whole, the first answer at the top. Demo projects (the subject is
// the console's opening, not the CLI).
import type { Page } from '@playwright/test';
import { test, expect } from '../support/fixtures';
import { assistantTexts, dialog, openSession, press, scrollTranscriptToTop, sendMessage, tid } from '../support/console';

/** Answer `n`'s text block. */
const block = (page: Page, n: number) => assistantTexts(page).filter({ hasText: new RegExp(`^Block ${n} of a long session\\.$`) });

test('flow 31: a long session opens on its latest events and its waiting prompt; Show all opens it whole', async ({ page, backend, api, workDir, uid }) => {
  test.skip(backend.name !== 'demo', 'a scripted long session (demo agent)');
  const sid = await api.createSession({ cwd: workDir, title: `flow 31 ${uid}` });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-many ${uid}`);
  await expect(dialog(page)).toBeVisible({ timeout: 60_000 });
  // Opened while it was short: whole, no banner.
  await expect(tid(page, 'history-partial')).toHaveCount(0);
  await expect(block(page, 1)).toHaveCount(1);

  // Afresh, as a notification opens it.
  await openSession(page, backend, sid);
  await expect(tid(page, 'history-partial')).toBeVisible();
  await expect(dialog(page)).toBeVisible();
  // Only the latest events are applied: the last answers, not the first.
  await expect(block(page, 260)).toHaveCount(1);
  await expect(block(page, 1)).toHaveCount(0);
  await press(tid(page, 'permission-allow'));
  await expect(dialog(page)).toBeHidden();
  await expect(assistantTexts(page).last()).toContainText('E2E-MANY-ALLOWED');

  await press(tid(page, 'history-show-all'));
  await expect(tid(page, 'history-partial')).toHaveCount(0);
  await expect(block(page, 1)).toHaveCount(1);
  await scrollTranscriptToTop(page);
  await expect(block(page, 1)).toBeInViewport();
});
