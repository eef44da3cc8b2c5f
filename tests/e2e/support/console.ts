// Driving the console through its data-testid contract (issue 5) — nothing else of its DOM is assumed.
import { expect, type Locator, type Page } from '@playwright/test';
import type { BackendInfo } from './state';
import { watchPage } from './page-log';

export const tid = (page: Page | Locator, id: string): Locator => page.getByTestId(id);

/** The login link a newcomer gets from the relay, optionally for a path such as `/s/<id>`. */
export function loginUrl(backend: BackendInfo, pathname = '/', base = backend.base): string {
  return `${base}${pathname}#login=${backend.login}`;
}

/** Open the console with the login link: the fragment is exchanged for a cookie and removed from the URL. */
export async function openConsole(page: Page, backend: BackendInfo, pathname = '/', base = backend.base): Promise<void> {
  await page.goto(loginUrl(backend, pathname, base));
  // Signed in: the session list (always in the DOM, a drawer on phones) or the opened session.
  await expect(tid(page, 'session-list').or(tid(page, 'transcript')).first()).toBeAttached();
  await expect(page).not.toHaveURL(/#login=/);
}

/** Open a session by URL (after logging in through `openConsole`, or with a cookie already set). */
export async function openSession(page: Page, backend: BackendInfo, sessionId: string, base = backend.base): Promise<void> {
  const cookies = await page.context().cookies(base);
  if (cookies.some((c) => c.name === 'bridge_session' || c.name === '__Host-bridge_session')) {
    await page.goto(`${base}/s/${sessionId}`);
  } else {
    await page.goto(loginUrl(backend, `/s/${sessionId}`, base));
  }
  await expect(tid(page, 'transcript')).toBeVisible();
  await expectLive(page);
}

export async function expectLive(page: Page, timeout = 15_000): Promise<void> {
  await expect(tid(page, 'connection-status')).toHaveAttribute('data-state', 'live', { timeout });
}

/** Click, or tap on touch projects. */
export async function press(locator: Locator): Promise<void> {
  const hasTouch = await locator.page().evaluate(() => navigator.maxTouchPoints > 0);
  if (hasTouch) await locator.tap();
  else await locator.click();
}

/** Type a message and send it; the user message appears in the transcript. */
export async function sendMessage(page: Page, text: string): Promise<void> {
  const input = tid(page, 'composer-input');
  await expect(input).toBeEditable();
  await input.fill(text);
  await expect(tid(page, 'composer-send')).toBeEnabled();
  await press(tid(page, 'composer-send'));
  // The row is rendered at once, but a fast, long answer can push it out of the virtualized window
  // before we look: then it must be found further up the transcript.
  const shown = userMessages(page).filter({ hasText: text.slice(0, 40) });
  const quick = await shown
    .first()
    .waitFor({ state: 'visible', timeout: 5_000 })
    .then(() => true)
    .catch(() => false);
  if (quick) return;
  // A session's newest user row is usually near the top of what was pushed out: look there first.
  await scrollTranscriptToTop(page);
  const atTop = await shown
    .first()
    .waitFor({ state: 'attached', timeout: 3_000 })
    .then(() => true)
    .catch(() => false);
  if (atTop) {
    await scrollTranscriptToBottom(page); // back where the console follows the newest rows
    return;
  }
  // Else walk the whole transcript. One walk can take many seconds on a phone when an answer holds a
  // very long line (flow 11's 100 KB line wraps into tens of thousands of pixels), so the wait is
  // longer than one walk.
  await expect
    .poll(
      async () =>
        (await shown.count()) > 0 ||
        (await snapshot(page)).some((r) => r.role === 'user' && r.text.includes(text.slice(0, 40))),
      { timeout: 40_000, message: `the sent message "${text.slice(0, 40)}" is in the transcript` },
    )
    .toBe(true);
}

export const userMessages = (page: Page): Locator => page.locator('[data-testid="message"][data-role="user"]');
export const assistantTexts = (page: Page): Locator => tid(page, 'assistant-text');
export const results = (page: Page): Locator => tid(page, 'result-summary');
export const toolCalls = (page: Page, name?: string): Locator =>
  page.locator(name ? `[data-testid="tool-call"][data-tool-name="${name}"]` : '[data-testid="tool-call"]');
export const dialog = (page: Page): Locator => tid(page, 'permission-dialog');

/** Send `text` and wait for the permission dialog it brings, asking about the tool `toolName`: the dialog. */
export async function sendAndAwaitDialog(page: Page, text: string, toolName: string): Promise<Locator> {
  await sendMessage(page, text);
  const dlg = dialog(page);
  await expect(dlg).toBeVisible();
  await expect(dlg).toHaveAttribute('data-tool-name', toolName);
  return dlg;
}

const resultsSeen = new WeakMap<Page, Set<string>>();

/**
 * Wait until the page has shown `n` result footers (n completed turns). The transcript is virtualized,
 * so footers that scrolled far away leave the DOM: footers are remembered per page by their row's uuid.
 */
export async function waitForTurns(page: Page, n: number, timeout = 45_000): Promise<void> {
  const seen = resultsSeen.get(page) ?? new Set<string>();
  resultsSeen.set(page, seen);
  await expect
    .poll(
      async () => {
        const ids = await results(page).evaluateAll((els) =>
          els.map((e) => (e.closest('[data-testid="message"]') as HTMLElement | null)?.dataset.uuid || e.textContent || ''),
        );
        for (const id of ids) seen.add(id);
        return seen.size;
      },
      { timeout, message: `waiting for ${n} result footer(s)` },
    )
    .toBe(n);
}

export async function expectSessionState(page: Page, state: string, timeout = 15_000): Promise<void> {
  await expect(tid(page, 'session-state')).toHaveAttribute('data-state', state, { timeout });
}

export interface Row {
  role: string;
  uuid: string;
  text: string;
}

/** The rows in the DOM now, in order (the transcript is virtualized: only rows near the viewport). */
export async function renderedRows(page: Page): Promise<Row[]> {
  return page.locator('[data-testid="message"]').evaluateAll((els) =>
    els.map((e) => ({
      role: e.getAttribute('data-role') ?? '',
      uuid: e.getAttribute('data-uuid') ?? '',
      text: (e as HTMLElement).innerText.replace(/\s+/g, ' ').trim(),
    })),
  );
}

/**
 * The whole transcript as data (role, uuid, text of every row, in order): scrolls the virtualized list
 * from top to bottom collecting rows, and leaves it at the bottom.
 */
export async function snapshot(page: Page): Promise<Row[]> {
  // Each look sees a contiguous run of rows in order; a row not seen before goes right after the row
  // that precedes it in that run (or before the run's first known row), so the order does not depend
  // on which part of the list happened to render first.
  const rows = new Map<string, Row>();
  let order: string[] = [];
  const collect = async () => {
    const batch = (await renderedRows(page)).map((r) => ({ key: r.uuid || `${r.role}:${r.text}`, r }));
    let prev: string | null = null;
    const fresh: string[] = [];
    const place = (before: string | null) => {
      if (!fresh.length) return;
      const at = before === null ? order.length : order.indexOf(before);
      order.splice(at, 0, ...fresh);
      fresh.length = 0;
    };
    for (const { key, r } of batch) {
      const known = rows.has(key);
      rows.set(key, r); // a later look (e.g. after streaming) wins
      if (known) {
        if (prev === null) place(key);
        prev = key;
      } else if (prev === null) {
        fresh.push(key);
      } else {
        order.splice(order.indexOf(prev) + 1, 0, key);
        prev = key;
      }
    }
    place(null);
    order = order.filter((k, i) => order.indexOf(k) === i);
  };
  const scroller = async (to: 'top' | 'next' | 'bottom') =>
    tid(page, 'transcript').evaluate((root, to) => {
      const candidates = [root, ...Array.from(root.querySelectorAll('*'))] as HTMLElement[];
      let el: HTMLElement | null = root.parentElement;
      while (el) {
        candidates.push(el);
        el = el.parentElement;
      }
      const s = candidates.find((e) => e.scrollHeight > e.clientHeight + 1 && getComputedStyle(e).overflowY !== 'visible');
      if (!s) return true;
      // Scroll the way a person does: a wheel turn up, then the move (the console only lets go of
      // the bottom for a move up that follows the person's own input).
      if (to === 'top') s.dispatchEvent(new WheelEvent('wheel', { deltaY: -400, bubbles: true }));
      if (to === 'top') s.scrollTop = 0;
      else if (to === 'bottom') s.scrollTop = s.scrollHeight;
      else s.scrollTop += Math.max(100, s.clientHeight * 0.6);
      return s.scrollTop + s.clientHeight >= s.scrollHeight - 2;
    }, to);
  let atEnd = await scroller('top');
  for (let i = 0; i < 500; i++) {
    await page.waitForTimeout(60); // let the virtual window render
    await collect();
    if (atEnd) break;
    atEnd = await scroller('next');
  }
  await scroller('bottom');
  await page.waitForTimeout(60);
  await collect();
  return order.map((k) => rows.get(k) as Row);
}

/** Scroll the transcript to its top, as a person does (a wheel turn up, then the move). */
export async function scrollTranscriptToTop(page: Page): Promise<void> {
  await tid(page, 'transcript').evaluate((root) => {
    const all = [root, ...Array.from(root.querySelectorAll('*'))] as HTMLElement[];
    for (let e = root.parentElement; e; e = e.parentElement) all.push(e);
    const s = all.find((e) => e.scrollHeight > e.clientHeight + 1 && getComputedStyle(e).overflowY !== 'visible');
    if (!s) return;
    s.dispatchEvent(new WheelEvent('wheel', { deltaY: -400, bubbles: true }));
    s.scrollTop = 0;
  });
}

/** Scroll the transcript (and whatever scrolls inside it) to the bottom, where the newest rows are. */
export async function scrollTranscriptToBottom(page: Page): Promise<void> {
  await tid(page, 'transcript').evaluate((root) => {
    const all = [root, ...Array.from(root.querySelectorAll('*'))] as HTMLElement[];
    let el: HTMLElement | null = root.parentElement;
    while (el) {
      all.push(el);
      el = el.parentElement;
    }
    for (const e of all) if (e.scrollHeight > e.clientHeight + 1) e.scrollTop = e.scrollHeight;
  });
}

/** Deny the open prompt with a message to the model. */
export async function denyWithMessage(page: Page, message: string): Promise<void> {
  const box = tid(page, 'permission-deny-message');
  if (!(await box.isVisible())) await press(tid(page, 'permission-deny'));
  await expect(box).toBeVisible();
  await box.fill(message);
  await press(tid(page, 'permission-deny'));
}

/** Count every `L001`…`L080` marker in `text` (for the "nothing missing, nothing twice" checks). */
export function lineCounts(text: string, n = 80): number[] {
  const counts: number[] = [];
  for (let i = 1; i <= n; i++) {
    const tag = `L${String(i).padStart(3, '0')} `;
    counts.push(text.split(tag).length - 1);
  }
  return counts;
}

/** A second browser context with the same form factor as the current project (for observers, 2nd controllers). */
export async function newPageLikeProject(
  browser: import('@playwright/test').Browser,
  use: { viewport?: { width: number; height: number } | null; isMobile?: boolean; hasTouch?: boolean; deviceScaleFactor?: number },
): Promise<Page> {
  const ctx = await browser.newContext({
    viewport: use.viewport ?? undefined,
    isMobile: use.isMobile,
    hasTouch: use.hasTouch,
    deviceScaleFactor: use.deviceScaleFactor,
  });
  const page = await ctx.newPage();
  watchPage(page);
  return page;
}

/**
 * The element holding one permission suggestion and its editors (destination, rule contents): the
 * `permission-suggestion` element itself when it wraps them, else its nearest ancestor that does.
 */
export function suggestionBox(suggestion: Locator): Locator {
  return suggestion.locator(
    'xpath=ancestor-or-self::*[@data-testid="permission-suggestion-destination" or .//*[@data-testid="permission-suggestion-destination"]][1]',
  );
}

function suggestionCheckbox(suggestion: Locator): Locator {
  return suggestion.locator(
    'xpath=self::input[@type="checkbox"] | .//input[@type="checkbox"] | .//*[@role="checkbox" or @role="switch"]',
  ).first();
}

/** Set a suggestion's destination (if it has a destination control) and check it. */
export async function acceptSuggestion(suggestion: Locator, destination?: string): Promise<void> {
  if (destination) {
    const box = suggestionBox(suggestion);
    const select = box.getByTestId('permission-suggestion-destination');
    if ((await box.count()) > 0 && (await select.count()) > 0) await select.first().selectOption(destination);
  }
  await suggestionCheckbox(suggestion).check();
}

/** Uncheck a suggestion if it is checked. */
export async function rejectSuggestion(suggestion: Locator): Promise<void> {
  const box = suggestionCheckbox(suggestion);
  if ((await box.count()) > 0 && (await box.isChecked())) await box.uncheck();
}

/** The visible description of a suggestion (its own text, or its box's). */
export async function suggestionText(suggestion: Locator): Promise<string> {
  const box = suggestionBox(suggestion);
  const own = (await suggestion.innerText().catch(() => '')) ?? '';
  if (own.trim()) return own;
  return (await box.count()) > 0 ? box.innerText() : '';
}
