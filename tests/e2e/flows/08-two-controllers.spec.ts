// Flow 8: two controllers both see the prompt; one answers; the other's dialog closes saying it was answered.
import { test, expect } from '../support/fixtures';
import { dialog, newPageLikeProject, openSession, press, sendMessage, tid, toolCalls, waitForTurns } from '../support/console';

test('flow 08: two controllers, one answers, the other is told', async ({ page, browser, backend, api, workDir, uid, shots }, testInfo) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 08' });
  const other = await newPageLikeProject(browser, testInfo.project.use);
  shots.set('second-controller', other);
  await openSession(page, backend, sid);
  await openSession(other, backend, sid);

  await sendMessage(page, `e2e-bash two controllers ${uid}`);
  await expect(dialog(page)).toBeVisible();
  await expect(dialog(other)).toBeVisible();
  const requestId = await dialog(page).getAttribute('data-request-id');
  expect(requestId).toBeTruthy();
  await expect(dialog(other)).toHaveAttribute('data-request-id', requestId!);

  await press(tid(other, 'permission-allow'));
  await expect(dialog(other)).toBeHidden();
  await expect(dialog(page), 'the first controller\'s dialog closes').toBeHidden();
  await expect(page.getByText(/answered/i).filter({ visible: true }).first(), 'and says it was answered elsewhere').toBeVisible();
  for (const p of [page, other]) {
    await expect(toolCalls(p, 'Bash').last()).toHaveAttribute('data-status', 'done');
    await waitForTurns(p, 1);
  }
  const events = await api.events(sid);
  const answers = events.filter((e) => e.source === 'client' && e.payload.type === 'control_response');
  expect(answers.length, 'exactly one answer reached the agent').toBe(1);
  expect(answers[0].payload.response?.request_id).toBe(requestId);
});
