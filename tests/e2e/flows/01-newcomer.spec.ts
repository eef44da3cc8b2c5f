// Flow 1: open the console as a newcomer would (login link → cookie), create a session, send a message,
// watch the answer stream in (data-streaming true → false), see the result footer with tokens and cost.
import { test, expect } from '../support/fixtures';
import { assistantTexts, expectLive, expectSessionState, openConsole, press, results, sendMessage, tid, waitForTurns } from '../support/console';

test('flow 01: newcomer logs in, creates a session and watches an answer stream', async ({ page, backend, uid, workDir }) => {
  await openConsole(page, backend);
  const cookie = (await page.context().cookies(backend.base)).find((c) => c.name === 'bridge_session');
  expect(cookie, 'the login link was exchanged for a session cookie').toBeTruthy();
  expect(cookie!.httpOnly).toBe(true);
  expect(cookie!.sameSite).toBe('Strict');
  expect(await page.evaluate(() => document.cookie), 'the cookie is not readable by scripts').not.toContain('bridge_session');

  await expect(tid(page, 'session-list')).toBeVisible(); // no session open yet: the list is the page
  // "New session" (new-session / new-session-create are the console's own test ids, beyond the issue-5
  // contract; the role names are the fallback).
  const newSession = tid(page, 'new-session').or(page.getByRole('button', { name: /new session/i })).first();
  await press(newSession);
  const cwd = tid(page, 'new-session-cwd');
  if ((await cwd.count()) > 0) await cwd.fill(workDir); // keep the test's files apart
  await press(tid(page, 'new-session-create').or(page.getByRole('button', { name: /^(create|start)( session)?$/i })).first());
  await page.waitForURL(/\/s\/[^/?#]+$/);
  await expect(tid(page, 'transcript')).toBeVisible();
  await expectLive(page);
  await expectSessionState(page, 'idle');

  await sendMessage(page, `e2e-basic hello, I'm new here ${uid}`);
  const answer = assistantTexts(page).last();
  await expect(answer).toHaveAttribute('data-streaming', 'true');
  await expect(answer).toHaveAttribute('data-streaming', 'false', { timeout: 30_000 });
  await expect(answer).toContainText('E2E-BASIC-DONE');
  await expect(answer.locator('table')).toHaveCount(1);
  expect(await tid(page, 'thinking-block').count()).toBeGreaterThan(0);

  await waitForTurns(page, 1);
  const footer = results(page).last();
  await expect(footer).toContainText(/\d[\d,.]*\s*(k\s*)?(tok|in\b)/i); // token counts ("22 in · 55 out" or "… tokens")
  await expect(footer).toContainText(/\$\s?\d/);
  await expectSessionState(page, 'idle');

  // The session is listed with its state (on a phone the list may be a separate view: check the DOM).
  const id = new URL(page.url()).pathname.split('/').pop()!;
  await expect(page.locator(`[data-testid="session-item"][data-session-id="${id}"]`)).toHaveAttribute('data-state', 'idle');
});
