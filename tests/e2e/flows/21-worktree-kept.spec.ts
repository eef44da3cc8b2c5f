// Flow 21: worktree mode never destroys work, and the console says so (issue 13). A relay of its own
// runs with --spawn-mode worktree in a fresh git repository: every session gets its own worktree on
// its own branch. A worktree with nothing in it is removed on archive, silently. One with an
// uncommitted file is kept: right after "Archive" the console says so — path, branch, why — and the
// archived session stays listed as "worktree kept", also after a reload (it comes from the session
// list). "Discard worktree" asks first ("Keep it" keeps it); confirmed, the relay removes the
// directory and the branch.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { APIRequestContext, Page } from '@playwright/test';
import { test, expect } from '../support/fixtures';
import { openConsole, press, tid } from '../support/console';
import { startRelay, type OwnRelay } from '../support/relay';

const SHOTS = path.resolve(__dirname, '../artifacts/screenshots');

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

async function shot(page: Page, name: string, project: string): Promise<void> {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `21-worktree-kept--${project}--${name}.png`) });
}

async function listed(api: APIRequestContext, query: string): Promise<string[]> {
  const r = await api.get(`/v1/code/sessions${query}`);
  expect(r.ok(), await r.text()).toBeTruthy();
  // The relay's own sessions: with the real CLI, Claude Code's transcripts from other flows (same HOME) are listed too.
  return ((await r.json()).sessions as Array<{ id: string; origin?: string }>).filter((s) => s.origin !== 'cli').map((s) => s.id);
}

test('flow 21: archiving keeps a worktree with work in it, says where and why, and discards it on request', async ({
  page,
  backend,
  uid,
  playwright,
}, testInfo) => {
  test.setTimeout(150_000);
  const project = testInfo.project.name;
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), `bridge-e2e-wt-${uid}-`));
  git(repo, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(repo, 'README.md'), '# flow 21\n');
  git(repo, 'add', 'README.md');
  git(repo, 'commit', '-q', '-m', 'init');

  let relay: OwnRelay | undefined;
  let api: APIRequestContext | undefined;
  try {
    relay = await startRelay(backend, `relay-worktree-${backend.name}-${uid}`, ['--spawn-mode', 'worktree'], {
      tls: false,
      cwd: repo,
    });
    api = await playwright.request.newContext({
      baseURL: relay.base,
      extraHTTPHeaders: { Authorization: `Bearer ${relay.login}` },
    });
    const create = async (title: string) => {
      const r = await api!.post('/v1/code/sessions', { data: { title } });
      expect(r.status(), await r.text()).toBe(201);
      const id = (await r.json()).session_id as string;
      const s = await (await api!.get(`/v1/code/sessions/${id}`)).json();
      return { id, path: s.worktree.path as string, branch: s.worktree.branch as string };
    };
    const clean = await create(`flow 21 clean ${uid}`);
    const kept = await create(`flow 21 kept ${uid}`);
    expect(fs.existsSync(clean.path) && fs.existsSync(kept.path), 'each session has its worktree').toBe(true);
    expect(kept.branch).toMatch(/^bridge\//);
    // Work nobody committed: what the agent would leave behind.
    fs.writeFileSync(path.join(kept.path, `notes-${uid}.txt`), 'half-done work\n');

    await openConsole(page, backend, '/', relay.base);
    const item = (id: string) => page.locator(`[data-testid="session-item"][data-session-id="${id}"]`);
    await expect(item(clean.id)).toBeVisible();
    await expect(item(kept.id)).toBeVisible();

    // Nothing to lose: archived, the worktree and its branch removed, nothing to say.
    await press(item(clean.id).getByTestId('session-archive'));
    await expect(item(clean.id)).toHaveCount(0);
    await expect.poll(() => fs.existsSync(clean.path), { message: 'the clean worktree is removed' }).toBe(false);
    await expect(tid(page, 'archive-notice')).toHaveCount(0);
    await expect(tid(page, 'kept-worktree-item')).toHaveCount(0);

    // Uncommitted work: kept, and the console says where and why.
    await press(item(kept.id).getByTestId('session-archive'));
    const notice = tid(page, 'archive-notice');
    await expect(notice).toBeVisible();
    await expect(notice).toHaveAttribute('data-kind', 'kept');
    await expect(notice).toContainText(`flow 21 kept ${uid}`);
    await expect(tid(notice, 'worktree-why')).toHaveText('uncommitted changes');
    await expect(tid(notice, 'worktree-path')).toHaveText(kept.path);
    await expect(tid(notice, 'worktree-branch')).toHaveText(kept.branch);
    await expect(tid(notice, 'worktree-discard')).toBeVisible();
    await expect(item(kept.id)).toHaveCount(0);
    const keptItem = page.locator(`[data-testid="kept-worktree-item"][data-session-id="${kept.id}"]`);
    await expect(keptItem).toBeVisible();
    await expect(tid(keptItem, 'worktree-kept-badge')).toHaveText(/worktree kept/);
    await expect(tid(keptItem, 'worktree-path')).toHaveText(kept.path);
    expect(fs.existsSync(path.join(kept.path, `notes-${uid}.txt`)), 'the work is still there').toBe(true);
    await shot(page, 'kept', project);

    // After a reload the notice is gone, the listing stays (it comes from the relay's session list).
    await page.reload();
    await expect(keptItem).toBeVisible();
    await expect(tid(page, 'archive-notice')).toHaveCount(0);
    await expect(tid(keptItem, 'worktree-why')).toHaveText('uncommitted changes');
    await expect(tid(keptItem, 'worktree-path')).toHaveText(kept.path);
    await expect(tid(keptItem, 'worktree-branch')).toHaveText(kept.branch);
    expect(await listed(api, '?kept_worktrees=1')).toEqual([kept.id]);

    // Discard asks first; "Keep it" keeps it.
    await press(tid(keptItem, 'worktree-discard'));
    const confirm = tid(keptItem, 'worktree-discard-confirm');
    await expect(confirm).toBeVisible();
    await expect(confirm).toContainText(kept.path);
    await expect(confirm).toContainText('cannot be undone');
    await shot(page, 'confirm', project);
    await press(tid(confirm, 'worktree-discard-no'));
    await expect(confirm).toHaveCount(0);
    await expect(keptItem).toBeVisible();
    expect(fs.existsSync(kept.path), 'still kept after "Keep it"').toBe(true);

    // Confirmed: the relay removes the directory and the branch; the console says so.
    await press(tid(keptItem, 'worktree-discard'));
    await press(tid(keptItem, 'worktree-discard-yes'));
    await expect(tid(page, 'archive-notice')).toHaveAttribute('data-kind', 'discarded');
    await expect(tid(page, 'archive-notice')).toContainText(kept.path);
    await expect(keptItem).toHaveCount(0);
    await expect.poll(() => fs.existsSync(kept.path), { message: 'the discarded worktree is removed' }).toBe(false);
    await expect.poll(() => git(repo, 'branch', '--list', kept.branch), { message: 'and its branch' }).toBe('');
    expect(await listed(api, '?kept_worktrees=1')).toEqual([]);
    await shot(page, 'discarded', project);
    await page.reload();
    await expect(tid(page, 'session-list')).toBeVisible();
    await expect(tid(page, 'kept-worktree-item')).toHaveCount(0);
  } finally {
    await api?.dispose();
    await relay?.stop();
    fs.rmSync(repo, { recursive: true, force: true });
  }
});
