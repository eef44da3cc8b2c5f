// Flow 26 (issue 12): the split console (scripts/build-console.sh, what the relay serves in CI). No lazily
// loaded part (console-<hash>/split_<part>.wasm) nor shared chunk (chunk_<n>.wasm) is fetched before the
// session list has arrived; once it has, every part loads while the browser is idle; the markdown of an answer
// and a prompt's dialog then come from those parts. The session view is a part too, and so are the typed
// decoder and the transcript model that applies frames: the main module (all that loads before the list)
// holds none of bridge-protocol's decoding (its field names are absent from it, present in the session part).
// Opening a session from the list fetches the session part at once; a deep link fetches it first, before any
// other part, and frames that arrive while it loads are kept and applied in order once it is in. The static
// shell of index.html covers the page until the list is in, then is gone. A one-module build (`trunk build`)
// has no parts: this flow fails on it, because the relay must serve the split build.
import { test, expect } from '../support/fixtures';
import type { Page } from '@playwright/test';
import { assistantTexts, denyWithMessage, dialog, expectLive, openConsole, openSession, press, sendMessage, tid, waitForTurns } from '../support/console';

const PARTS = ['dialogs', 'diff', 'live', 'markdown', 'session', 'settings'];

/** Records the split build's lazily fetched files in order: `part:<name>` and `chunk:<n>`. */
function recordParts(page: Page, events: string[]): void {
  page.on('request', (r) => {
    const path = new URL(r.url()).pathname;
    const m = /\/split_([a-z]+)\.wasm$/.exec(path);
    if (m) events.push(`part:${m[1]}`);
    const c = /\/chunk_([0-9]+)\.wasm$/.exec(path);
    if (c) events.push(`chunk:${c[1]}`);
  });
}

// Field names only bridge-protocol's typed decoder (CliMessage's result, system and control bodies) holds.
const DECODER_NAMES = ['permission_denials', 'compact_metadata', 'apiKeySource'];

test('flow 26: the lazily loaded parts load after the session list, then render markdown and dialogs', async ({ page, backend, api, workDir, uid }) => {
  test.skip(backend.name !== 'demo', 'the console build is the same for both backends');
  const events: string[] = [];
  recordParts(page, events);
  let mainWasm = '';
  page.on('request', (r) => {
    if (/\/console-[0-9a-f]+\/bridge-console_bg\.wasm$/.test(new URL(r.url()).pathname)) mainWasm = r.url();
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
  const firstPart = events.findIndex((e) => e.startsWith('part:') || e.startsWith('chunk:'));
  const list = events.indexOf('list');
  expect(list, `the session list arrived (${events.join(', ')})`).toBeGreaterThanOrEqual(0);
  expect(firstPart, `no part or chunk is fetched before the session list (${events.join(', ')})`).toBeGreaterThan(list);

  // The decoder is in the session part, not in the main module.
  expect(mainWasm, 'the main module was fetched').not.toBe('');
  const text = async (url: string) => Buffer.from(await (await page.request.get(url)).body()).toString('latin1');
  const main = await text(mainWasm);
  const sessionPart = await text(mainWasm.replace(/bridge-console_bg\.wasm$/, 'split_session.wasm'));
  for (const name of DECODER_NAMES) {
    expect(main.includes(name), `the main module holds no typed decoding ("${name}")`).toBe(false);
    expect(sessionPart.includes(name), `the session part holds the typed decoder ("${name}")`).toBe(true);
  }

  // Markdown (the markdown part) and a permission dialog (the dialogs part) work.
  const sid = await api.createSession({ cwd: workDir, title: `flow 26 ${uid}` });
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

  const browser = page.context().browser()!;
  const viewport = page.viewportSize() ?? undefined;
  const hasTouch = await page.evaluate(() => navigator.maxTouchPoints > 0);

  // A fresh browser (no cache) opens the console and, as soon as the list is in, the session from it:
  // nothing of the session part came before the list; it is fetched when the session opens (if the idle
  // prefetch has not started already), and the transcript shows both turns from it.
  {
    const fresh = await browser.newContext({ viewport, hasTouch, isMobile: hasTouch });
    const p = await fresh.newPage();
    const seen: string[] = [];
    p.on('response', (r) => {
      if (r.request().method() === 'GET' && new URL(r.url()).pathname === '/v1/code/sessions' && !seen.includes('list')) seen.push('list');
    });
    recordParts(p, seen);
    await openConsole(p, backend);
    const item = p.locator(`[data-testid="session-item"][data-session-id="${sid}"]`);
    await expect(item).toBeVisible();
    await press(item);
    await expect(tid(p, 'transcript')).toBeVisible();
    const list = seen.indexOf('list');
    expect(list, `the list came before any part (${seen.join(', ')})`).toBe(0);
    expect(seen, `the session part was fetched (${seen.join(', ')})`).toContain('part:session');
    await expectLive(p);
    await expect(assistantTexts(p).first().locator('h2')).toHaveText('E2E answer');
    await waitForTurns(p, 2);
    await fresh.close();
  }

  // A deep link in a fresh browser whose session part arrives late (held 1.5 s): the session part is
  // fetched first, before any other part; the session's frames that arrive meanwhile wait for it and
  // are all applied, in order, once it is in.
  {
    const fresh = await browser.newContext({ viewport, hasTouch, isMobile: hasTouch });
    const deep = await fresh.newPage();
    await deep.route(/\/split_session\.wasm$/, async (route) => {
      await new Promise((r) => setTimeout(r, 1_500));
      await route.continue();
    });
    const deepParts: string[] = [];
    recordParts(deep, deepParts);
    await openSession(deep, backend, sid);
    const first = deepParts.find((e) => e.startsWith('part:'));
    expect(first, `the session part comes first on a deep link (${deepParts.join(', ')})`).toBe('part:session');
    await waitForTurns(deep, 2);
    await expect(assistantTexts(deep).first().locator('h2')).toHaveText('E2E answer');
    const users = await deep.locator('[data-testid="message"][data-role="user"]').allInnerTexts();
    const basic = users.findIndex((t) => t.includes(`e2e-basic lazily ${uid}`));
    const deny = users.findIndex((t) => t.includes(`e2e-deny lazily ${uid}`));
    expect(basic, `both prompts, in order (${users.join(' | ')})`).toBeGreaterThanOrEqual(0);
    expect(deny).toBeGreaterThan(basic);
    await fresh.close();
  }
});
