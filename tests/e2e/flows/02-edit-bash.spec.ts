// Flow 2: a Bash permission prompt; edit the command in the dialog and allow. With the real CLI the edited
// command is what runs (its effect on disk), and the transcript shows what actually ran.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, expect } from '../support/fixtures';
import { dialog, openSession, press, sendMessage, tid, toolCalls, waitForTurns, expectSessionState } from '../support/console';

test('flow 02: edit a Bash command in the permission dialog, the edited command runs', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 02' });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-bash please create a file ${uid}`);

  const dlg = dialog(page);
  await expect(dlg).toBeVisible();
  await expect(dlg).toHaveAttribute('data-tool-name', 'Bash');
  await expectSessionState(page, 'requires_action');
  const field = tid(page, 'permission-field-command');
  await expect(field).toHaveValue('touch e2e-original.txt');
  const edited = `touch e2e-edited-${uid}.txt`;
  await field.fill(edited);
  await press(tid(page, 'permission-allow'));
  await expect(dlg).toBeHidden();

  const card = toolCalls(page, 'Bash').last();
  await expect(card).toHaveAttribute('data-status', 'done');
  await expect(card, 'the card shows the command that actually ran').toContainText(edited);
  await expect(tid(page, 'tool-result').last()).toBeVisible();
  await waitForTurns(page, 1);

  // What the console sent: the edited input.
  const events = await api.events(sid);
  const answer = events.find((e) => e.source === 'client' && e.payload.type === 'control_response');
  expect(answer?.payload.response?.response?.behavior).toBe('allow');
  expect(answer?.payload.response?.response?.updatedInput?.command).toBe(edited);

  if (backend.name === 'real') {
    expect(fs.existsSync(path.join(workDir, `e2e-edited-${uid}.txt`)), 'the edited command ran').toBe(true);
    expect(fs.existsSync(path.join(workDir, 'e2e-original.txt')), 'the original command did not run').toBe(false);
  } else {
    // The demo agent simulates Bash and reports `$ <command actually run>`.
    await expect(tid(page, 'tool-result').last()).toContainText(edited);
  }
});
