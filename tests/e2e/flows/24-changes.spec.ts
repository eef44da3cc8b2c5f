// Flow 24: the changes panel. The agent writes a file (real CLI: its Write tool, in a git repository
// with a change of the person's own; demo: the scripted Write, outside git — the demo agent simulates
// its tools, so the test makes on disk the change the Write describes before the turn). The header's
// count follows the Write's result without the panel being opened again; the panel lists the file with
// its status and +/- counts, and tapping it shows its diff (the same diff view as Edit cards). On a
// phone the panel is a full-screen sheet and a long line scrolls inside the code box, not the page.
// Read-only: no commit/revert. An observer token reads the same API.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, expect } from '../support/fixtures';
import { openSession, press, sendMessage, tid, waitForTurns } from '../support/console';

const FILE = 'e2e-changes-note.md';
// What the scripted Write (both scenarios) puts in the file.
const CONTENT =
  '# Changes panel\n\n- written by the agent\n- shown with its diff\n' +
  `A long line: ${'the changes panel keeps long lines on one line, '.repeat(4).trim()}\n`;
const SHOTS = path.resolve(__dirname, '../artifacts/screenshots');

function git(dir: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.email=e2e@example.com', '-c', 'user.name=e2e', '-c', 'init.defaultBranch=main', ...args], {
    cwd: dir,
    stdio: 'pipe',
  });
}

test('flow 24: the changes panel shows the file the agent wrote, with its diff', async ({ page, backend, api, workDir, uid }, testInfo) => {
  const real = backend.name === 'real';
  const phone = testInfo.project.name.endsWith('phone');
  const shot = async (label: string) => {
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, `flow-24-changes--${testInfo.project.name}--${label}.png`) });
  };
  if (real) {
    // A repository with one change of the person's own before the session starts.
    fs.writeFileSync(path.join(workDir, 'README.md'), '# Project\n\nFirst line.\n');
    fs.writeFileSync(path.join(workDir, 'app.js'), 'let x = 1;\n');
    git(workDir, 'init', '-q');
    git(workDir, 'add', '.');
    git(workDir, 'commit', '-qm', 'initial');
    fs.writeFileSync(path.join(workDir, 'README.md'), '# Project\n\nFirst line, edited.\nSecond line.\n');
    fs.writeFileSync(path.join(workDir, 'app.js'), 'let x = 2;\n');
  }
  const sid = await api.createSession({ cwd: workDir, title: 'flow 24', permission_mode: 'acceptEdits' });
  await openSession(page, backend, sid);

  const button = tid(page, 'changes-open');
  await expect(button).toHaveAttribute('data-count', real ? '2' : '0');
  await press(button);
  const panel = tid(page, 'changes-panel');
  await expect(panel).toBeVisible();
  await expect(tid(page, 'changes-summary')).toContainText(real ? 'git, branch main' : 'not a git repository');
  if (!real) await expect(tid(page, 'changes-empty')).toBeVisible();
  await press(tid(page, 'changes-close'));
  await expect(panel).toBeHidden();

  if (!real) {
    // The demo agent only simulates its Write: make that change on disk. Nothing in the session's
    // log names the file yet, so it is not listed until the Write's result arrives.
    fs.writeFileSync(path.join(workDir, FILE), CONTENT);
  }
  await sendMessage(page, `e2e-write the notes ${uid}`);
  await waitForTurns(page, 1);
  await expect(page.getByText('E2E-WRITE-DONE')).toBeVisible();
  if (real) {
    expect(fs.readFileSync(path.join(workDir, FILE), 'utf8'), 'the real Write wrote the file').toBe(CONTENT);
  }
  // The count follows the Write's result, without opening the panel.
  await expect(button).toHaveAttribute('data-count', real ? '3' : '1');

  await press(button);
  await expect(panel).toBeVisible();
  const item = panel.locator(`[data-testid="change-item"][data-path="${FILE}"]`);
  await expect(item).toHaveAttribute('data-status', real ? 'untracked' : 'added');
  await expect(item).toContainText('+5 −0');
  if (real) {
    await expect(panel.locator('[data-testid="change-item"][data-path="README.md"]')).toHaveAttribute('data-status', 'modified');
    await expect(panel.locator('[data-testid="change-item"][data-path="README.md"]')).toContainText('+2 −1');
  }
  // Read-only: nothing to commit, revert or discard with.
  await expect(panel.getByRole('button', { name: /commit|revert|discard|stage/i })).toHaveCount(0);
  await shot('list');

  await press(item);
  const diff = tid(page, 'change-diff');
  await expect(diff).toHaveAttribute('data-path', FILE);
  await expect(panel).toHaveAttribute('data-view', 'diff');
  await expect(diff.locator('.diff-line.add')).toHaveCount(5);
  await expect(diff.locator('.diff-line.del')).toHaveCount(0);
  await expect(diff).toContainText('- shown with its diff');
  await expect(diff.locator('.diff-stats')).toHaveText('−0 +5');

  // Readable on a phone: a full-screen sheet; the long line scrolls inside the code box, not the page.
  const viewport = page.viewportSize()!;
  const box = (await panel.boundingBox())!;
  if (phone) {
    expect(box.width).toBeGreaterThanOrEqual(viewport.width - 1);
    expect(box.height).toBeGreaterThanOrEqual(viewport.height - 1);
  } else {
    expect(box.width).toBeLessThan(viewport.width);
  }
  const code = diff.locator('.diff-body');
  const [scrollW, clientW] = await code.evaluate((el) => [el.scrollWidth, el.clientWidth]);
  if (phone) expect(scrollW, 'the long line overflows its code box').toBeGreaterThan(clientW);
  const pageScrolls = await page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
  expect(pageScrolls, 'the page itself never scrolls sideways').toBe(false);
  await shot('diff');

  if (real) {
    // The person's own change, against HEAD.
    await press(tid(page, 'changes-back'));
    await press(panel.locator('[data-testid="change-item"][data-path="README.md"]'));
    await expect(diff).toHaveAttribute('data-path', 'README.md');
    await expect(diff.locator('.diff-line.del')).toHaveText(['-First line.']);
    await expect(diff.locator('.diff-line.add')).toHaveText(['+First line, edited.', '+Second line.']);
  }
  // Escape goes back to the list, then closes.
  await page.keyboard.press('Escape');
  await expect(panel).toHaveAttribute('data-view', 'list');
  await page.keyboard.press('Escape');
  await expect(panel).toBeHidden();
  await expect(button).toBeFocused();

  // Observers read the same (read-only) API.
  const observer = await api.observerToken(sid);
  const r = await fetch(`${backend.base}/v1/code/sessions/${sid}/changes`, { headers: { Authorization: `Bearer ${observer.token}` } });
  expect(r.status).toBe(200);
  const list = (await r.json()) as { source: string; files: Array<{ path: string }> };
  expect(list.source).toBe(real ? 'git' : 'tools');
  expect(list.files.map((f) => f.path)).toContain(FILE);
});
