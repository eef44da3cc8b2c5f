// Flow 13: the model asks a multiple-choice question (AskUserQuestion) and proposes a plan (ExitPlanMode).
// Each gets its own dialog, not a bare allow/deny: the chosen answer goes back in updatedInput.answers and
// reaches the model; the plan is rendered, and approving it lets the turn go on.
import { test, expect } from '../support/fixtures';
import { openSession, press, sendAndAwaitDialog, tid, waitForTurns } from '../support/console';

const QUESTION = 'Which color should the primary button be?';

test('flow 13: a question gets a choice dialog, a plan gets a plan dialog', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 13' });
  await openSession(page, backend, sid);

  // The question.
  const dlg = await sendAndAwaitDialog(page, `e2e-ask pick a color ${uid}`, 'AskUserQuestion');
  await expect(dlg).toContainText(QUESTION);
  const options = tid(page, 'question-option');
  await expect(options).toHaveCount(2);
  await expect(tid(page, 'permission-allow'), 'nothing chosen yet').toBeDisabled();
  await dlg.getByLabel(/Green/).check();
  await press(tid(page, 'permission-allow'));
  await expect(dlg).toBeHidden();
  await waitForTurns(page, 1);

  let events = await api.events(sid);
  const answer = events.find((e) => e.source === 'client' && e.payload.type === 'control_response');
  expect(answer?.payload.response?.response?.behavior).toBe('allow');
  expect(answer?.payload.response?.response?.updatedInput?.answers).toEqual({ [QUESTION]: 'Green' });
  // The answer is what the tool returned to the model.
  const toolResult = events.find(
    (e) => e.source === 'worker' && e.payload.type === 'user' && JSON.stringify(e.payload.message?.content ?? '').includes('tool_result'),
  );
  expect(JSON.stringify(toolResult?.payload.message.content)).toContain('Green');

  // The plan: in plan mode (outside it the CLI refuses ExitPlanMode).
  const mode = tid(page, 'permission-mode-select');
  await mode.selectOption('plan');
  await expect(mode).toHaveValue('plan');
  await sendAndAwaitDialog(page, `e2e-plan add a verbose flag ${uid}`, 'ExitPlanMode');
  // The CLI asks with an empty input; the dialog shows the plan from the model's tool_use.
  const ask = (await api.events(sid)).filter((e) => e.payload.type === 'control_request' && e.payload.request?.subtype === 'can_use_tool').pop();
  expect(ask?.payload.request.input).toEqual({});
  // Rendered as markdown (a heading and a list), not as JSON.
  const plan = dlg.locator('.plan');
  await expect(plan.locator('h1')).toHaveText('Plan');
  await expect(plan.locator('li')).toHaveCount(3);
  await expect(dlg.getByText('--verbose')).toBeVisible();
  await press(tid(page, 'permission-allow'));
  await expect(dlg).toBeHidden();
  await waitForTurns(page, 2);

  events = await api.events(sid);
  const answers = events.filter((e) => e.source === 'client' && e.payload.type === 'control_response');
  expect(answers.length).toBe(2);
  expect(answers[1].payload.response?.response?.behavior).toBe('allow');
  const modes = events.filter((e) => e.source === 'worker' && e.payload.type === 'system' && e.payload.permissionMode).map((e) => e.payload.permissionMode);
  expect(modes.slice(-2), 'the CLI announced plan mode, then left it').toEqual(['plan', 'default']);
  await expect(mode, 'approving the plan leaves plan mode').not.toHaveValue('plan');
});
