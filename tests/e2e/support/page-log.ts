// What every browser page of the running test printed: console errors and warnings, uncaught
// exceptions, and wasm panics (console_error_panic_hook logs "panicked at …"). Attached to a failed
// test; a panic fails the test even when its assertions passed (after a panic the console is dead).
import type { Page } from '@playwright/test';

interface Entry {
  page: string;
  at: number;
  kind: string;
  text: string;
}

let entries: Entry[] = [];
let pages = 0;
const started = Date.now();

/** Records what `page` prints, under `label` (e.g. "controller", "observer"). */
export function watchPage(page: Page, label?: string): void {
  const name = label ?? `page ${++pages}`;
  const push = (kind: string, text: string) => entries.push({ page: name, at: Date.now() - started, kind, text });
  page.on('console', (m) => {
    const t = m.type();
    if (t === 'error' || t === 'warning') push(t, m.text());
  });
  page.on('pageerror', (e) => push('pageerror', `${e.name}: ${e.message}`));
  page.on('crash', () => push('crash', 'the page crashed'));
}

/** Starts a test's record. */
export function resetPageLog(): void {
  entries = [];
  pages = 0;
}

export function pageLogText(): string {
  return entries.map((e) => `[${e.page} +${e.at}ms ${e.kind}] ${e.text}`).join('\n');
}

/** The wasm panics and page crashes recorded so far. */
export function fatalPageErrors(): string[] {
  return entries
    .filter((e) => e.kind === 'crash' || /panicked at/.test(e.text))
    .map((e) => `[${e.page}] ${e.text}`);
}
