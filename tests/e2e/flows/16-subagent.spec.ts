// Flow 16 (real CLI only; the demo agent has no subagents): the model delegates with Task. CLI 2.1.332
// runs it as a background agent: the Task result comes back at once ("Async agent launched"), the turn
// ends, the subagent's own frames (parent_tool_use_id = the Task's id) keep arriving, and when it
// finishes the CLI starts another turn by itself (frames after `result`). The console nests the subagent's
// text and tool calls inside the Task card and shows both turns.
import { test, expect } from '../support/fixtures';
import { expectSessionState, openSession, sendMessage, tid, toolCalls, waitForTurns } from '../support/console';

test('flow 16: a subagent works inside its Task card, and its completion starts a turn', async ({ page, backend, api, workDir, uid }, testInfo) => {
  test.skip(backend.name === 'demo', 'the demo agent does not run subagents');
  const sid = await api.createSession({ cwd: workDir, title: 'flow 16' });
  await openSession(page, backend, sid);

  await sendMessage(page, `e2e-task look around ${uid}`);
  // The launch turn, then the turn the subagent's completion starts.
  await waitForTurns(page, 2, 60_000);
  await expect(tid(page, 'assistant-text').last()).toContainText('E2E-TASK-DONE');
  await expectSessionState(page, 'idle');

  const task = toolCalls(page, 'Task').first();
  await expect(task).toHaveAttribute('data-status', 'done');
  // The launch notes meant for the model are folded away.
  await expect(task.locator('details.launch-notes > summary')).toContainText('Launch notes');
  await expect(task.locator('details.launch-notes')).not.toHaveAttribute('open', /.*/);
  // The subagent's Bash call and its closing text are inside the Task card, not in the main thread.
  const nestedBash = task.locator('[data-testid="tool-call"][data-tool-name="Bash"]');
  await expect(nestedBash).toHaveCount(1);
  await expect(nestedBash).toContainText('echo e2e-sub-output');
  await expect(nestedBash.getByTestId('tool-result')).toContainText('e2e-sub-output');
  await expect(task.getByText('Found it. SUBAGENT-DONE').first()).toBeVisible();
  await expect(toolCalls(page, 'Bash'), 'no Bash card outside the Task').toHaveCount(1);

  // The log agrees: the subagent's frames carry the Task's tool_use_id.
  const events = await api.events(sid);
  const taskUse = events.find((e) => e.payload.type === 'assistant' && e.payload.message?.content?.[0]?.name === 'Task');
  const taskId = taskUse?.payload.message.content[0].id;
  expect(taskId).toBeTruthy();
  const nested = events.filter((e) => e.payload.parent_tool_use_id === taskId);
  expect(nested.length).toBeGreaterThan(2);
  const results = events.filter((e) => e.payload.type === 'result');
  expect(results.length).toBe(2);
  testInfo.annotations.push({ type: 'subagent frames', description: String(nested.length) });
});
