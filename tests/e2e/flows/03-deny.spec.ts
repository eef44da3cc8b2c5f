// Flow 3: deny with a message; the model's next turn receives it (the fake model records its request);
// with the real CLI it appears in result.permission_denials.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, expect } from '../support/fixtures';
import { assistantTexts, denyWithMessage, dialog, openSession, sendMessage, toolCalls, waitForTurns } from '../support/console';

test('flow 03: deny with a message, the model receives it', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 03' });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-deny clean up ${uid}`);
  await expect(dialog(page)).toBeVisible();
  const reason = `Please use ls instead e2e-deny-reason-${uid}`;
  await denyWithMessage(page, reason);
  await expect(dialog(page)).toBeHidden();
  await expect(toolCalls(page, 'Bash').last()).toHaveAttribute('data-status', 'denied');
  await waitForTurns(page, 1);
  await expect(assistantTexts(page).last()).toContainText('E2E-DENY-ACK');

  const events = await api.events(sid);
  const sent = events.find((e) => e.source === 'client' && e.payload.type === 'control_response');
  expect(sent?.payload.response?.response?.behavior).toBe('deny');
  expect(sent?.payload.response?.response?.message).toContain(`e2e-deny-reason-${uid}`);
  const result = events.filter((e) => e.payload.type === 'result').pop();
  const denials = result?.payload.permission_denials as Array<Record<string, any>>;
  expect(denials?.length, JSON.stringify(result?.payload)).toBe(1);
  expect(denials[0].tool_name).toBe('Bash');
  expect(denials[0].tool_input?.command).toBe('touch e2e-denied.txt');

  if (backend.name === 'real') {
    const reqs = await api.fakeModelRequests();
    const followUp = reqs.find((r) => String(r.last_user_text ?? '').includes(`e2e-deny-reason-${uid}`));
    expect(followUp, 'the deny message reached the model in its next request').toBeTruthy();
    expect(fs.existsSync(path.join(workDir, 'e2e-denied.txt'))).toBe(false);
  } else {
    await expect(assistantTexts(page).last()).toContainText(`e2e-deny-reason-${uid}`);
  }
});
