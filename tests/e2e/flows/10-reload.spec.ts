// Flow 10: reload the page mid-session (mid-stream): the transcript comes back from the log and the
// session continues.
import { test, expect } from '../support/fixtures';
import { assistantTexts, expectLive, lineCounts, openSession, sendMessage, snapshot, tid, waitForTurns } from '../support/console';

test('flow 10: reload mid-stream, the transcript comes back and the session continues', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 10' });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-basic before the reload ${uid}`);
  await waitForTurns(page, 1);
  const before = await snapshot(page);

  await sendMessage(page, `e2e-lines while reloading ${uid}`);
  await expect(assistantTexts(page).last()).toContainText('L005 ');
  await page.reload();
  await expect(page).toHaveURL(new RegExp(`/s/${sid}$`));
  await expect(tid(page, 'transcript')).toBeVisible();
  await expectLive(page);
  // Everything from before the reload is back, in order.
  const after = await snapshot(page);
  expect(after.slice(0, before.length)).toEqual(before);

  await waitForTurns(page, 2, 60_000);
  const answer = assistantTexts(page).last();
  await expect(answer).toContainText('E2E-LINES-DONE');
  expect(lineCounts(await answer.innerText())).toEqual(new Array(80).fill(1));

  await sendMessage(page, `e2e-basic after the reload ${uid}`);
  await waitForTurns(page, 3);
  await expect(assistantTexts(page).last()).toContainText('E2E-BASIC-DONE');
  const uuids = (await snapshot(page)).map((m) => m.uuid).filter((u) => u);
  expect(new Set(uuids).size).toBe(uuids.length);
});
