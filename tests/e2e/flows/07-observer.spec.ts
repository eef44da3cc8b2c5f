// Flow 7: an observer (second browser context, observer token) sees the same transcript live, streaming
// included, has no controls, sees prompts as waiting for the controller, and its forged POST is refused.
import { test, expect } from '../support/fixtures';
import { assistantTexts, dialog, expectLive, newPageLikeProject, openSession, press, sendMessage, snapshot, tid, toolCalls, waitForTurns } from '../support/console';

test('flow 07: an observer mirrors the session live and cannot act', async ({ page, browser, backend, api, workDir, uid, shots }, testInfo) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 07' });
  await openSession(page, backend, sid);
  const { console_url } = await api.observerToken(sid);
  const obs = await newPageLikeProject(browser, testInfo.project.use);
  shots.set('observer', obs);
  await obs.goto(console_url.includes('/s/') ? console_url : console_url.replace('/#', `/s/${sid}#`));
  await expect(tid(obs, 'observer-banner')).toBeVisible();
  await expect(tid(obs, 'transcript')).toBeVisible();
  await expectLive(obs);
  for (const control of ['composer-input', 'composer-send', 'interrupt-button', 'model-select', 'permission-mode-select', 'permission-allow', 'permission-deny']) {
    await expect(tid(obs, control), `observer has no ${control}`).toHaveCount(0);
  }

  // Whether the observer ever shows the answer while it streams: recorded in the page (the stream lasts
  // about a second, and Playwright's polling backs off to one check a second, so a poll can miss it).
  await obs.evaluate(() => {
    const w = window as unknown as { __sawStreaming: boolean };
    w.__sawStreaming = false;
    new MutationObserver(() => {
      if (document.querySelector('[data-testid="assistant-text"][data-streaming="true"]')) w.__sawStreaming = true;
    }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-streaming'] });
  });
  await sendMessage(page, `e2e-basic observed ${uid}`);
  const mirrored = assistantTexts(obs).last();
  await expect(mirrored).toHaveAttribute('data-streaming', 'false', { timeout: 30_000 });
  expect(await obs.evaluate(() => (window as unknown as { __sawStreaming: boolean }).__sawStreaming), 'the observer sees the answer stream').toBe(true);
  await waitForTurns(page, 1);
  await waitForTurns(obs, 1);
  expect(await assistantTexts(obs).last().innerText()).toBe(await assistantTexts(page).last().innerText());

  // A prompt: the controller answers it, the observer only sees that it waits for the controller.
  await sendMessage(page, `e2e-bash observed prompt ${uid}`);
  await expect(dialog(page)).toBeVisible();
  await expect(obs.getByText(/waiting for the controller/i).filter({ visible: true }).first()).toBeVisible();
  await expect(tid(obs, 'permission-allow')).toHaveCount(0);
  await press(tid(page, 'permission-allow'));
  await expect(toolCalls(obs, 'Bash').last()).toHaveAttribute('data-status', 'done');
  await waitForTurns(page, 2);
  await waitForTurns(obs, 2);

  // Forged writes from the observer's browser are refused by the relay.
  const forged = `forged-${uid}`;
  const statuses = await obs.evaluate(
    async ({ sid, forged }) => {
      const post = (payload: unknown) =>
        fetch(`/v1/code/sessions/${sid}/events`, {
          method: 'POST',
          // With the observer's own login secret (the cookie alone is 401): refused for the role.
          headers: {
            'content-type': 'application/json',
            'x-bridge-login': localStorage.getItem('bridge-console.login-secret') ?? '',
          },
          body: JSON.stringify({ session_id: sid, events: [{ payload }] }),
        }).then((r) => r.status);
      return [
        await post({ type: 'user', uuid: crypto.randomUUID(), session_id: '', parent_tool_use_id: null, message: { role: 'user', content: forged } }),
        await post({ type: 'control_request', request_id: forged, request: { subtype: 'interrupt' } }),
      ];
    },
    { sid, forged },
  );
  expect(statuses).toEqual([403, 403]);
  const events = await api.events(sid);
  expect(JSON.stringify(events)).not.toContain(forged);

  // Same transcript on both sides.
  const strip = (s: Awaited<ReturnType<typeof snapshot>>) => s.map((m) => `${m.role}:${m.uuid}`);
  expect(strip(await snapshot(obs))).toEqual(strip(await snapshot(page)));
});
