// Flow 26 (issue 12): the split console (scripts/build-console.sh, what the relay serves in CI). No lazily
// loaded part (console-<hash>/split_<part>.wasm) is fetched before the session list has arrived; once it
// has, every part loads while the browser is idle; the markdown of an answer and a prompt's dialog then
// come from those parts. The session view is a part too: the list never waits for it, and a deep link to a
// session fetches it at once, before any other part. The static shell of index.html covers the page until the
// list is in, then is gone. A one-module build (`trunk build`) has no parts: this flow fails on it, because
// the relay must serve the split build.
import { test, expect } from '../support/fixtures';
import { assistantTexts, denyWithMessage, dialog, openConsole, openSession, sendMessage, tid, waitForTurns } from '../support/console';

const PARTS = ['dialogs', 'diff', 'markdown', 'session', 'settings'];

test('flow 26: the lazily loaded parts load after the session list, then render markdown and dialogs', async ({ page, backend, api, workDir, uid }) => {
  test.skip(backend.name !== 'demo', 'the console build is the same for both backends');
  const events: string[] = [];
  page.on('request', (r) => {
    const m = /\/split_([a-z]+)\.wasm$/.exec(new URL(r.url()).pathname);
    if (m) events.push(`part:${m[1]}`);
  });
  page.on('response', (r) => {
    const u = new URL(r.url());
    if (r.request().method() === 'GET' && u.pathname === '/v1/code/sessions') events.push('list');
  });

  await openConsole(page, backend);
  await expect(tid(page, 'session-list')).toBeAttached();
  await expect(page.locator('#boot-shell'), 'the static shell gives way to the console').toHaveCount(0);
  await expect
    .poll(() => PARTS.filter((p) => events.includes(`part:${p}`)), { message: 'every part loads when idle', timeout: 20_000 })
    .toEqual(PARTS);
  const firstPart = events.findIndex((e) => e.startsWith('part:'));
  const list = events.indexOf('list');
  expect(list, `the session list arrived (${events.join(', ')})`).toBeGreaterThanOrEqual(0);
  expect(firstPart, `no part is fetched before the session list (${events.join(', ')})`).toBeGreaterThan(list);

  // Markdown (the markdown part) and a permission dialog (the dialogs part) work.
  const sid = await api.createSession({ cwd: workDir, title: 'flow 26' });

  // A deep link to the session in a fresh browser (no cache): the session part is fetched at once,
  // before any other part, and the transcript shows from it.
  const fresh = await page.context().browser()!.newContext({ viewport: page.viewportSize() ?? undefined });
  const deep = await fresh.newPage();
  const deepParts: string[] = [];
  deep.on('request', (r) => {
    const m = /\/split_([a-z]+)\.wasm$/.exec(new URL(r.url()).pathname);
    if (m) deepParts.push(m[1]);
  });
  await openSession(deep, backend, sid);
  expect(deepParts[0], `the session part comes first on a deep link (${deepParts.join(', ')})`).toBe('session');
  await fresh.close();

  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-basic lazily ${uid}`);
  await waitForTurns(page, 1);
  await expect(assistantTexts(page).last().locator('h2')).toHaveText('E2E answer');
  await expect(assistantTexts(page).last().locator('table td').first()).toHaveText('1');
  await expect(page.locator('.md-plain')).toHaveCount(0);
  await sendMessage(page, `e2e-deny lazily ${uid}`);
  await expect(dialog(page)).toBeVisible();
  await denyWithMessage(page, `no thanks ${uid}`);
  await expect(dialog(page)).toBeHidden();
  await waitForTurns(page, 2);
});
