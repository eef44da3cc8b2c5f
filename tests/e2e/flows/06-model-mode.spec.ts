// Flow 6: switch model and permission mode; the next turn's init shows them.
import { test, expect } from '../support/fixtures';
import { openSession, sendMessage, tid, waitForTurns } from '../support/console';

test('flow 06: switching model and permission mode shows in the next turn', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 06' });
  await openSession(page, backend, sid);
  const model = tid(page, 'model-select');
  const mode = tid(page, 'permission-mode-select');
  await expect(model).toBeEnabled();
  // Filled from the initialize response (the real CLI answers initialize about 1 s after it starts, so a
  // console that read the session before that must pick the models up later).
  await expect(model.locator('option[value="haiku"]'), 'model-select lists the initialize response\'s models').toHaveCount(1);
  await model.selectOption('haiku');
  await mode.selectOption('acceptEdits');
  await expect(mode).toHaveValue('acceptEdits');

  await sendMessage(page, `e2e-basic after switching ${uid}`);
  await waitForTurns(page, 1);
  const init = page.locator('[data-testid="message"][data-role="system"]').filter({ hasText: /haiku/i }).last();
  await expect(init).toBeVisible();
  await expect(init).toContainText('acceptEdits');

  const events = await api.events(sid);
  const sent = events.filter((e) => e.source === 'client' && e.payload.type === 'control_request').map((e) => e.payload.request);
  expect(sent.some((r) => r.subtype === 'set_model' && r.model === 'haiku')).toBe(true);
  expect(sent.some((r) => r.subtype === 'set_permission_mode' && r.mode === 'acceptEdits')).toBe(true);
  const inits = events.filter((e) => e.payload.type === 'system' && e.payload.subtype === 'init');
  const last = inits[inits.length - 1].payload;
  expect(String(last.model)).toMatch(/haiku/i);
  expect(last.permissionMode).toBe('acceptEdits');
  if (backend.name === 'real') {
    const reqs = await api.fakeModelRequests();
    const turn = reqs.filter((r) => String(r.last_user_text ?? '').includes(`e2e-basic after switching ${uid}`)).pop();
    expect(String(turn?.body?.model), 'the model the CLI asked the API for').toMatch(/haiku/i);
  }
});
