// Flow 11: hostile output (<script>, <img onerror>, javascript: links, a 100 KB line): no script runs
// (page-level flag + dialog listener), raw HTML shows as text, layout holds.
import { test, expect } from '../support/fixtures';
import { assistantTexts, openSession, scrollTranscriptToBottom, sendMessage, tid, waitForTurns } from '../support/console';

test('flow 11: hostile model output stays inert and the layout holds', async ({ page, backend, api, workDir, uid }) => {
  await page.addInitScript(() => {
    (window as any).__pwnedCalls = [] as string[];
    (window as any).__pwned = (what: string) => (window as any).__pwnedCalls.push(what);
  });
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const sid = await api.createSession({ cwd: workDir, title: 'flow 11' });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-hostile show me ${uid}`);
  await waitForTurns(page, 1, 60_000);
  const transcript = tid(page, 'transcript');
  await expect(transcript).toContainText('End of hostile output.');
  await expect(transcript).toContainText('LONGLINE-END');

  // Raw HTML from the model is shown as text...
  await expect(transcript).toContainText("<script>window.__pwned('script-tag')</script>");
  await expect(transcript).toContainText('onerror=');
  // ...and never becomes DOM.
  for (const sel of ['script', 'img[src*="x-e2e-hostile"]', '[onerror]', '[onload]', '[ontoggle]', 'iframe', 'svg[onload]', 'a[href^="javascript:" i]', 'a[href^="data:" i]', 'img[src^="javascript:" i]']) {
    await expect(transcript.locator(sel), `no ${sel} in the transcript`).toHaveCount(0);
  }
  // Clicking what looks like the link does nothing.
  await page.getByText('click me', { exact: false }).first().click({ force: true }).catch(() => undefined);
  await page.waitForTimeout(500);
  expect(await page.evaluate(() => (window as any).__pwnedCalls)).toEqual([]);
  expect(dialogs).toEqual([]);

  // Layout: no horizontal page scroll, the composer is still on screen and usable.
  const overflow = await page.evaluate(() => document.scrollingElement!.scrollWidth - window.innerWidth);
  expect(overflow, 'the 100 KB line does not widen the page').toBeLessThanOrEqual(1);
  const box = await tid(page, 'composer-input').boundingBox();
  const vp = page.viewportSize()!;
  expect(box).toBeTruthy();
  expect(box!.x).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width).toBeLessThanOrEqual(vp.width + 1);
  expect(box!.y + box!.height).toBeLessThanOrEqual(vp.height + 1);
  const answerBox = await assistantTexts(page).filter({ hasText: 'LONGLINE-START' }).first().boundingBox();
  expect(answerBox!.width).toBeLessThanOrEqual(vp.width + 1);
  // Clicking scrolled the transcript up; the newest rows are at the bottom (the list is virtualized).
  await scrollTranscriptToBottom(page);
  await sendMessage(page, `e2e-basic still works ${uid}`);
  await waitForTurns(page, 2);
});
