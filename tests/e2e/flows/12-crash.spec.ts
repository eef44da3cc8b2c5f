// Flow 12: the agent crashes mid-turn: the console says so (and prints how fast); the relay keeps serving other
// sessions. Demo: a scripted crash step (exit 3). Real CLI: the model asks Bash to `kill -9 $PPID` (the CLI).
import { test, expect } from '../support/fixtures';
import { assistantTexts, dialog, expectSessionState, openSession, press, sendMessage, tid, waitForTurns } from '../support/console';

test('flow 12: an agent crash is reported at once and other sessions keep working', async ({ page, backend, api, workDir, uid }, testInfo) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 12' });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-crash now ${uid}`);
  let t0: number;
  if (backend.name === 'real') {
    await expect(dialog(page)).toBeVisible();
    await expect(tid(page, 'permission-field-command')).toHaveValue('kill -9 $PPID');
    t0 = Date.now();
    await press(tid(page, 'permission-allow'));
  } else {
    await expect(assistantTexts(page).last()).toContainText('the agent will crash now');
    t0 = Date.now(); // the scripted crash follows 300 ms after this text
  }
  // How fast is a figure (printed, and kept as an annotation), not a pass/fail timer: on a loaded machine the
  // real CLI alone can take a second to spawn the shell that kills it.
  await expectSessionState(page, 'ended', 10_000);
  const latency = Date.now() - t0;
  testInfo.annotations.push({ type: 'crash-to-ended-ms', description: String(latency) });
  console.log(`[flow 12 ${testInfo.project.name}] crash shown after ${latency} ms`);
  await expect(tid(page, 'transcript').getByText(/exit code|signal|exited|killed/i).first(), 'the console says why').toBeVisible();
  await expect(tid(page, 'composer-send')).toBeDisabled();

  // The relay's own record of the exit (source "relay", or "worker" marked relay_generated for SDK clients).
  const events = await api.events(sid);
  const ended = events.find(
    (e) =>
      (e.source === 'relay' || e.payload.relay_generated === true) &&
      e.payload.subtype === 'session_state_changed' &&
      e.payload.state === 'ended',
  );
  expect(ended, `the relay logged the exit: ${JSON.stringify(events.slice(-3))}`).toBeTruthy();
  if (backend.name === 'real') expect(ended!.payload.signal).toBe(9);
  else expect(ended!.payload.exit_code).toBe(3);

  // The relay keeps serving: a new session works end to end.
  const sid2 = await api.createSession({ cwd: workDir, title: 'flow 12 (after the crash)' });
  await openSession(page, backend, sid2);
  await sendMessage(page, `e2e-basic after a crash ${uid}`);
  await waitForTurns(page, 1);
  await expect(assistantTexts(page).last()).toContainText('E2E-BASIC-DONE');
  await expect(page.locator(`[data-testid="session-item"][data-session-id="${sid}"]`)).toHaveAttribute('data-state', 'ended');
});
