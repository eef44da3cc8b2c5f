// Flow 4: accept a permission suggestion as a session rule; the next identical tool call is not prompted.
import { test, expect } from '../support/fixtures';
import { acceptSuggestion, dialog, openSession, press, rejectSuggestion, sendMessage, suggestionText, tid, toolCalls, waitForTurns } from '../support/console';

test('flow 04: a suggestion accepted as a session rule stops the next identical prompt', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 04' });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-rule first ${uid}`);
  await expect(dialog(page)).toBeVisible();

  const suggestions = tid(page, 'permission-suggestion');
  await expect(suggestions.first()).toBeVisible();
  // Accept only the rule for this command, as a session rule; leave the others (setMode, directories) off.
  let rule = -1;
  for (let i = 0; i < (await suggestions.count()); i++) {
    const text = await suggestionText(suggestions.nth(i));
    if (rule < 0 && text.includes('touch e2e-rule.txt')) rule = i;
    else await rejectSuggestion(suggestions.nth(i));
  }
  expect(rule, 'a suggestion names the command').toBeGreaterThanOrEqual(0);
  await acceptSuggestion(suggestions.nth(rule), 'session');
  await press(tid(page, 'permission-allow'));
  await expect(dialog(page)).toBeHidden();
  await waitForTurns(page, 1);
  await expect(toolCalls(page, 'Bash').last()).toHaveAttribute('data-status', 'done');

  await sendMessage(page, `e2e-rule second ${uid}`);
  await waitForTurns(page, 2);
  await expect(toolCalls(page, 'Bash')).toHaveCount(2);
  await expect(toolCalls(page, 'Bash').last()).toHaveAttribute('data-status', 'done');
  await expect(dialog(page)).toHaveCount(0);

  const events = await api.events(sid);
  const asks = events.filter((e) => e.payload.type === 'control_request' && e.payload.request?.subtype === 'can_use_tool');
  expect(asks.length, 'only the first call was prompted').toBe(1);
  const sent = events.find((e) => e.source === 'client' && e.payload.type === 'control_response');
  const perms = sent?.payload.response?.response?.updatedPermissions as Array<Record<string, any>>;
  expect(perms?.length, JSON.stringify(sent?.payload)).toBe(1);
  expect(perms[0].type).toBe('addRules');
  expect(perms[0].destination).toBe('session');
  expect(JSON.stringify(perms[0].rules)).toContain('touch e2e-rule.txt');
});
