// Flow 5: interrupt a long streaming answer: streaming stops, the session returns to idle.
import { test, expect } from '../support/fixtures';
import { assistantTexts, expectSessionState, openSession, press, sendMessage, tid, waitForTurns } from '../support/console';

const FULL_LENGTH = 'Paragraph of a deliberately long answer. '.length * 150;

test('flow 05: interrupt a long streaming answer', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 05' });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-long tell me everything ${uid}`);
  const answer = assistantTexts(page).last();
  await expect(answer).toHaveAttribute('data-streaming', 'true');
  await expect.poll(async () => (await answer.innerText()).length).toBeGreaterThan(200);
  await expectSessionState(page, 'running');

  await expect(tid(page, 'interrupt-button')).toBeEnabled();
  await press(tid(page, 'interrupt-button'));
  await expect(answer).toHaveAttribute('data-streaming', 'false', { timeout: 5_000 });
  await expectSessionState(page, 'idle', 10_000);
  await waitForTurns(page, 1);

  const stopped = (await assistantTexts(page).last().innerText()).length;
  await page.waitForTimeout(1_500);
  expect((await assistantTexts(page).last().innerText()).length, 'nothing streams after the interrupt').toBe(stopped);
  expect(stopped, 'the answer was cut short').toBeLessThan(FULL_LENGTH);

  const events = await api.events(sid);
  const result = events.filter((e) => e.payload.type === 'result').pop();
  expect(result?.payload.subtype).toBe('error_during_execution');
  expect(events.some((e) => e.source === 'client' && e.payload.type === 'control_request' && e.payload.request?.subtype === 'interrupt')).toBe(true);
  if (backend.name === 'real') {
    const reqs = await api.fakeModelRequests();
    // Messages calls only (the console's get_context_usage makes the CLI count tokens on the same conversation).
    const streamed = reqs.filter((r) => r.path === '/v1/messages' && String(r.last_user_text ?? '').includes(`e2e-long tell me everything ${uid}`));
    expect(streamed.length).toBeGreaterThan(0);
    expect(streamed[streamed.length - 1].aborted, 'the CLI dropped the model stream').toBe(true);
  }
});
