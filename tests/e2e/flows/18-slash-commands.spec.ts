// Flow 18: slash commands. Typing `/` in the composer offers the commands the agent announced in its
// `initialize` response (44 for CLI 2.1.332); the list narrows as you type, Enter completes the highlighted
// one, and Enter on a command typed out in full sends it. `/compact` then compacts the conversation (the real
// CLI — and the demo agent, which mirrors it — asks the model for a summary, announces a compact boundary and replays the command's output, which the
// console shows without its tags; the long summary is folded).
import path from 'node:path';
import { test, expect } from '../support/fixtures';
import { openSession, sendMessage, tid, waitForTurns } from '../support/console';

test('flow 18: slash commands are offered, completed and sent', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 18' });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-basic before compacting ${uid}`);
  await waitForTurns(page, 1);

  const input = tid(page, 'composer-input');
  await input.fill('/');
  const menu = tid(page, 'slash-menu');
  await expect(menu).toBeVisible();
  await input.fill('/comp');
  await expect(tid(page, 'slash-option').first()).toHaveAttribute('data-name', 'compact');
  await page.screenshot({ path: path.join(__dirname, '../artifacts/screenshots', `flow-18-menu--${test.info().project.name}.png`) });
  await input.press('Enter');
  await expect(input).toHaveValue('/compact ');
  await expect(menu).toBeHidden();
  await input.press('Backspace');
  await input.press('Enter');
  await expect(input).toHaveValue('');

  // The composer clears as it sends; the POST reaches the relay a moment later.
  const lastSent = async () =>
    (await api.events(sid))
      .filter((e) => e.source === 'client' && e.payload.type === 'user')
      .map((e) => e.payload.message.content)
      .at(-1);
  await expect.poll(lastSent).toBe('/compact');
  await waitForTurns(page, 2);
  {
    // Compacted (the demo agent answers /compact as CLI 2.1.332 does): a boundary row, the summary folded
    // away, and the command's output without tags.
    await expect(page.locator('[data-testid="system-message"]', { hasText: 'Conversation compacted' })).toBeVisible();
    const summary = page.locator('details.folded-synthetic');
    await expect(summary.locator('summary')).toContainText('This session is being continued');
    await expect(summary).not.toHaveAttribute('open', /.*/);
    const output = page.locator('[data-origin="local-command"]', { hasText: 'Command output' });
    await expect(output).toContainText('Compacted');
    await expect(output).not.toContainText('local-command-stdout');
  }
});
