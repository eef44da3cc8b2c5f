// Flow 25 (issue 15): what the terminal shows beside the transcript. Claude keeps a task list with its
// task tools (real CLI 2.1.332: deferred tools loaded with ToolSearch, on a model that has them; demo:
// scripted) and the console shows it as a live checklist pinned above the transcript, each task-tool
// card in one line; the header has the context meter and the MCP servers (asked with get_context_usage /
// mcp_status when the session goes live (or its CLI starts, if still unknown) and when the meter's details open; between
// reports the meter follows each API call's usage); an observer sees them from the log.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { test, expect } from '../support/fixtures';
import { expectLive, newPageLikeProject, openSession, press, sendMessage, tid, toolCalls, waitForTurns } from '../support/console';

function shotPath(name: string): string {
  const dir = path.resolve(__dirname, '../artifacts/screenshots');
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, name);
}

/** Records every distinct state of the task checklist ("status:label|…") from now on. */
async function recordTaskStates(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __taskStates: string[] };
    w.__taskStates = [];
    const snap = () => {
      const s = Array.from(document.querySelectorAll('[data-testid="task-item"]'))
        .map((el) => `${(el as HTMLElement).dataset.status}:${el.querySelector('.task-label')?.textContent ?? ''}`)
        .join('|');
      if (s && w.__taskStates[w.__taskStates.length - 1] !== s) w.__taskStates.push(s);
    };
    new MutationObserver(snap).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  });
}

test('flow 25: the task list, context meter and MCP status', async ({ page, browser, backend, api, workDir, uid, shots }, testInfo) => {
  // claude-sonnet-4-5: a model CLI 2.1.332 offers its task tools to (not to the default one of the fake API).
  const sid = await api.createSession({ cwd: workDir, title: 'flow 25', model: 'claude-sonnet-4-5' });
  await openSession(page, backend, sid);
  const form = testInfo.project.name;

  // The header asks as soon as the session is live.
  const meter = tid(page, 'context-meter');
  await expect(meter, 'the context meter shows once Claude Code answered').toBeVisible({ timeout: 30_000 });
  const percentBefore = Number(await meter.getAttribute('data-percent'));
  expect(percentBefore).toBeGreaterThan(0);
  await expect(tid(page, 'mcp-status')).toBeVisible();

  await recordTaskStates(page);
  await sendMessage(page, `e2e-tasks keep a list ${uid}`);
  const list = tid(page, 'task-list');
  await expect(list, 'the checklist appears with the first TaskCreate').toBeVisible({ timeout: 30_000 });
  await waitForTurns(page, 1, 90_000);
  await expect(page.getByText('E2E-TASKS-DONE').first()).toBeVisible();

  const items = tid(list, 'task-item');
  await expect(items).toHaveCount(2);
  await expect(items.nth(0)).toHaveAttribute('data-status', 'completed');
  await expect(items.nth(1)).toHaveAttribute('data-status', 'in_progress');
  // In progress: the active form, as the terminal's spinner says it.
  await expect(items.nth(1)).toContainText('Writing the code');
  await expect(list).toHaveAttribute('data-done', '1');

  // Live: each call changed the checklist while the turn ran, in order.
  const states = await page.evaluate(() => (window as unknown as { __taskStates: string[] }).__taskStates);
  const expected = [
    'pending:E2E25 Read the spec',
    'pending:E2E25 Read the spec|pending:E2E25 Write the code',
    'in_progress:Reading the spec closely|pending:E2E25 Write the code',
    'completed:E2E25 Read the spec|pending:E2E25 Write the code',
    'completed:E2E25 Read the spec|in_progress:Writing the code',
  ];
  // Frames are applied once per animation frame (and a starved browser may get several calls in one):
  // every state shown must be one of these, in this order, ending with the last, and the list must
  // have changed in front of the person at least twice on the way.
  const order = states.map((s) => expected.indexOf(s));
  expect(order.every((i) => i >= 0), `only these states: ${JSON.stringify(states)}`).toBe(true);
  expect(order, 'in order').toEqual([...order].sort((a, b) => a - b));
  expect(states[states.length - 1]).toBe(expected[expected.length - 1]);
  expect(states.length, `live updates seen: ${JSON.stringify(states)}`).toBeGreaterThanOrEqual(3);

  // The task tools' cards are one line each, not JSON.
  await expect(tid(toolCalls(page, 'TaskCreate').first(), 'task-call')).toHaveText('Created task 1: E2E25 Read the spec');
  await expect(tid(toolCalls(page, 'TaskUpdate').last(), 'task-call')).toHaveText('Task 2: pending → in progress');
  await expect(toolCalls(page, 'TaskCreate').first().locator('pre.json')).toHaveCount(0);

  await page.screenshot({ path: shotPath(`flow-25-tasks--${form}.png`) });

  // Details on tap: used / window and the categories — the CLI's own breakdown, asked for when
  // the details open (between reports the meter follows each API call's usage; with the fake
  // model those figures are made up, so the check is on the CLI's report): more context in use.
  await press(tid(page, 'context-meter-toggle'));
  const details = tid(page, 'context-details');
  await expect(details).toBeVisible();
  await expect
    .poll(async () => Number(await meter.getAttribute('data-percent')), { message: 'the breakdown after the turn counts more', timeout: 20_000 })
    .toBeGreaterThan(percentBefore);
  await expect(tid(details, 'context-part').filter({ hasText: 'Messages' })).toHaveCount(1);
  await expect(details).toContainText(/of .* tokens/);
  await page.screenshot({ path: shotPath(`flow-25-context--${form}.png`) });
  await press(tid(page, 'context-meter-toggle'));
  await expect(details).toHaveCount(0);

  // MCP servers and their state (real: the e2e relay's `asker` server; demo: one of each state).
  await press(tid(page, 'mcp-status-toggle'));
  const servers = tid(page, 'mcp-server');
  if (backend.name === 'real') {
    await expect(servers.filter({ hasText: 'asker' })).toHaveAttribute('data-state', 'connected');
  } else {
    await expect(servers).toHaveCount(3);
    await expect(servers.filter({ hasText: 'demo-broken' })).toHaveAttribute('data-state', 'failed');
    await expect(servers.filter({ hasText: 'demo-broken' })).toContainText('ENOENT');
    await expect(servers.filter({ hasText: 'demo-tracker' })).toHaveAttribute('data-state', 'needs-auth');
    await expect(tid(page, 'mcp-status')).toHaveAttribute('data-state', 'danger');
    // Red for the failed server alone, named: the count on the chip, its name for screen readers,
    // first in the list.
    await expect(tid(page, 'mcp-status-toggle')).toContainText('MCP 1/3 · 1 failed');
    await expect(tid(page, 'mcp-status-toggle')).toHaveAttribute('aria-label', /demo-broken/);
    await expect(servers.first()).toContainText('demo-broken');
  }
  await page.screenshot({ path: shotPath(`flow-25-mcp--${form}.png`) });
  await press(tid(page, 'mcp-status-toggle'));

  // The checklist folds to one line (phones keep the transcript in view).
  await press(tid(list, 'task-list-toggle'));
  await expect(items.first()).toBeHidden();
  await expect(tid(list, 'task-list-toggle')).toHaveAttribute('aria-expanded', 'false');
  await expect(list).toContainText('1/2 done');
  await press(tid(list, 'task-list-toggle'));
  await expect(items.first()).toBeVisible();

  // The relay kept the console's requests and the CLI's answers.
  const events = await api.events(sid);
  const asked = events.filter((e) => e.source === 'client' && e.payload.type === 'control_request').map((e) => e.payload.request?.subtype);
  expect(asked.filter((s) => s === 'get_context_usage').length, 'asked when live and when the details opened').toBeGreaterThanOrEqual(2);
  expect(asked).toContain('mcp_status');

  // An observer (who may not ask) sees the last answers from the log, and the same checklist.
  const { console_url } = await api.observerToken(sid);
  const obs = await newPageLikeProject(browser, testInfo.project.use);
  shots.set('observer', obs);
  await obs.goto(console_url.includes('/s/') ? console_url : console_url.replace('/#', `/s/${sid}#`));
  await expect(tid(obs, 'observer-banner')).toBeVisible();
  await expectLive(obs);
  await expect(tid(obs, 'context-meter')).toBeVisible();
  await expect(tid(obs, 'mcp-status')).toBeVisible();
  await expect(tid(tid(obs, 'task-list'), 'task-item')).toHaveCount(2);
  await press(tid(obs, 'context-meter-toggle'));
  await expect(tid(obs, 'context-refresh'), 'observers cannot ask').toHaveCount(0);
  const after = await api.events(sid);
  expect(after.filter((e) => e.source === 'client' && e.payload.type === 'control_request').length, 'the observer asked nothing').toBe(
    events.filter((e) => e.source === 'client' && e.payload.type === 'control_request').length,
  );
  await obs.screenshot({ path: shotPath(`flow-25-observer--${form}.png`) });
});
