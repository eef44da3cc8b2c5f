// Flow 17 (demo agent; the markup does not depend on the backend): axe-core (WCAG 2.1 A and AA rules) finds
// no serious or critical violation on the session list, a finished turn (markdown, a tool card, the result
// footer) and an open permission dialog, in light and dark colour schemes, on desktop and phone. (It found
// low-contrast accent, warning and dark-mode danger colours and a Stop button whose accessible name did not
// contain its visible text; all fixed.)
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { test, expect } from '../support/fixtures';
import { dialog, openConsole, openSession, sendMessage, waitForTurns } from '../support/console';

async function audit(page: Page, where: string, only?: string): Promise<string[]> {
  let axe = new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']);
  if (only) axe = axe.include(only);
  const res = await axe.analyze();
  return res.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${where}: ${v.id} (${v.impact}) ${v.help} — ${v.nodes
      .slice(0, 4)
      .map((n) => `${n.target.join(' ')} ${n.any[0]?.message ?? ''}`)
      .join(' | ')}`);
}

for (const scheme of ['light', 'dark'] as const) {
  test(`flow 17: no serious accessibility violations (${scheme})`, async ({ page, backend, api, workDir, uid }) => {
    test.skip(backend.name !== 'demo', 'the markup is the same for both backends');
    await page.emulateMedia({ colorScheme: scheme });
    const found: string[] = [];
    await openConsole(page, backend);
    found.push(...(await audit(page, 'session list')));

    const sid = await api.createSession({ cwd: workDir, title: 'flow 17' });
    await openSession(page, backend, sid);
    await sendMessage(page, `e2e-bash accessibility ${uid}`);
    await expect(dialog(page)).toBeVisible();
    // The dialog is modal (aria-modal, focus kept inside); what it dims behind its backdrop is not audited.
    found.push(...(await audit(page, 'permission dialog', '[data-testid="permission-dialog"]')));
    await dialog(page).getByTestId('permission-allow').click();
    await waitForTurns(page, 1);
    await sendMessage(page, `e2e-basic accessibility ${uid}`);
    await waitForTurns(page, 2);
    found.push(...(await audit(page, 'transcript')));
    expect(found, found.join('\n')).toEqual([]);
  });
}
