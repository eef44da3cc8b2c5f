// Flow 9: cut the connection mid-stream and restore it: the transcript equals an uninterrupted run —
// nothing missing, nothing twice. The page talks to the relay through a cuttable proxy; the reference is
// a fresh page that loads the finished session straight from the relay's log.
import { test, expect } from '../support/fixtures';
import { assistantTexts, expectLive, lineCounts, newPageLikeProject, openConsole, openSession, sendMessage, snapshot, tid, waitForTurns } from '../support/console';
import { startProxy } from '../support/proxy';

test('flow 09: reconnect after a cut mid-stream loses and repeats nothing', async ({ page, browser, backend, api, workDir, uid, shots }, testInfo) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 09' });
  const proxy = await startProxy(backend.base);
  try {
    await openConsole(page, backend, `/s/${sid}`, proxy.url);
    await expect(tid(page, 'transcript')).toBeVisible();
    await expectLive(page);
    await sendMessage(page, `e2e-lines count for me ${uid}`);
    const answer = assistantTexts(page).last();
    await expect(answer).toContainText('L010 ');

    await proxy.cut(2_500);
    expect(proxy.killed(), 'the cut closed the live connection(s)').toBeGreaterThan(0);
    await expect(tid(page, 'connection-status')).not.toHaveAttribute('data-state', 'live', { timeout: 5_000 });
    await expectLive(page, 20_000);

    await waitForTurns(page, 1, 60_000);
    await expect(answer).toHaveAttribute('data-streaming', 'false');
    await expect(answer).toContainText('E2E-LINES-DONE');
    expect(lineCounts(await answer.innerText()), 'every line exactly once').toEqual(new Array(80).fill(1));

    const seen = await snapshot(page);
    const uuids = seen.map((m) => m.uuid).filter((u) => u);
    expect(new Set(uuids).size, 'no message twice').toBe(uuids.length);

    // The uninterrupted reference: the same session loaded from the log in a fresh context.
    const ref = await newPageLikeProject(browser, testInfo.project.use);
    shots.set('reference', ref);
    await openSession(ref, backend, sid);
    await waitForTurns(ref, 1);
    expect(await snapshot(page)).toEqual(await snapshot(ref));
  } finally {
    await proxy.close();
  }
});
