// Flow 15: an MCP tool asks the person for input through MCP elicitation. With the real CLI the tool comes
// from a stdio MCP server (support/mcp-asker.mjs) that sends `elicitation/create`; the CLI forwards it as an
// `elicitation` control request. The console shows a form built from the request's schema (not a bare
// allow/deny), typed values go back as `{action: "accept", content}`, the tool's result carries them, and the
// transcript keeps what was entered.
import path from 'node:path';
import { test, expect } from '../support/fixtures';
import { openSession, press, sendAndAwaitDialog, tid, toolCalls, waitForTurns } from '../support/console';

const QUESTION = 'What should the release be called?';
const TOOL = 'mcp__asker__ask_user';

test('flow 15: an MCP elicitation gets a form, and the answer reaches the tool', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 15' });
  await openSession(page, backend, sid);

  // First the CLI asks whether the MCP tool may run at all.
  const dlg = await sendAndAwaitDialog(page, `e2e-elicit name the release ${uid}`, TOOL);
  await press(tid(page, 'permission-allow'));

  // Then, while it runs, the MCP server asks for the answer: a form from the schema, fields in
  // property_order, the required one marked.
  await expect(dlg).toHaveAttribute('data-tool-name', 'asker');
  await expect(dlg).toContainText(QUESTION);
  const answer = tid(page, 'elicitation-field-answer');
  const urgent = tid(page, 'elicitation-field-urgent');
  await expect(answer).toBeVisible();
  await expect(urgent).toHaveAttribute('type', 'checkbox');
  await expect(dlg.locator('label.field')).toHaveText([/^Answer \*/, /^Urgent/]);
  const submit = tid(page, 'permission-allow');
  await expect(submit, 'a required field is empty').toBeDisabled();
  await answer.fill('Nimbus <b>7</b>');
  await urgent.check();
  await expect(submit).toBeEnabled();
  await page.screenshot({ path: path.join(__dirname, '../artifacts/screenshots', `flow-15-form--${test.info().project.name}.png`) });
  await press(submit);
  await expect(dlg).toBeHidden();
  await waitForTurns(page, 1);

  const events = await api.events(sid);
  const asked = events.find((e) => e.payload.type === 'control_request' && e.payload.request?.subtype === 'elicitation');
  expect(asked?.payload.request.mcp_server_name).toBe('asker');
  expect(asked?.payload.request.requested_schema?.required).toEqual(['answer']);
  const replies = events.filter((e) => e.source === 'client' && e.payload.type === 'control_response');
  expect(replies.length).toBe(2);
  expect(replies[1].payload.response.request_id).toBe(asked?.payload.request_id);
  expect(replies[1].payload.response.response).toEqual({ action: 'accept', content: { answer: 'Nimbus <b>7</b>', urgent: true } });

  // The tool's result (what the MCP server got back) is on the tool card, as text.
  const card = toolCalls(page, TOOL).last();
  await expect(card).toHaveAttribute('data-status', 'done');
  await expect(card.getByTestId('tool-result')).toContainText('Elicitation accept: {"answer":"Nimbus <b>7</b>","urgent":true}');
  await expect(card.locator('b')).toHaveCount(0);
  // What was entered also stays in the transcript as its own row, as text.
  const answered = page.locator('[data-testid="system-message"]', { hasText: 'form · asker' });
  await expect(answered).toContainText('You submitted: answer = Nimbus <b>7</b>, urgent = yes');
  await expect(answered.locator('b')).toHaveCount(0);
  await expect(tid(page, 'assistant-text').last()).toContainText('E2E-ELICIT-DONE');
});
