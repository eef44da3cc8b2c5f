// Flow 22 (issue 15): every Claude Code session on the machine. A session started with the real CLI in a
// terminal (outside the relay) is listed with data-origin="cli", opened (its history rendered from the
// transcript), resumed by sending a message (the fake model gets the earlier conversation), forked from an
// earlier prompt (the fake model gets only what came before it), and "restore files" answers with a preview
// or says clearly why it cannot. Demo projects: a transcript in the config dir is listed, opened and resumed
// with the scripted agent; forking a demo session is refused clearly (it writes no transcript).
// Each test starts its own relay with its own --claude-config-dir.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Page } from '@playwright/test';
import { test, expect } from '../support/fixtures';
import { assistantTexts, openConsole, press, scrollTranscriptToTop, sendMessage, tid, userMessages } from '../support/console';
import { startRelay, type OwnRelay } from '../support/relay';
import type { BackendInfo } from '../support/state';

const SHOTS = path.resolve(__dirname, '../artifacts/screenshots');
const FIXTURE = path.resolve(__dirname, '../../fixtures/transcripts/real-cli-2.1.332-resumed-write.jsonl');

async function shot(page: Page, name: string, project: string): Promise<void> {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `22-cli-sessions--${name}--${project}.png`) });
}

const item = (page: Page, id: string) => page.locator(`[data-testid="session-item"][data-session-id="${id}"]`);
const sessionIdFromUrl = (page: Page): string => decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);

/** Opens the list (on a phone the open session hides it) and the session `id` from it. */
async function openFromList(page: Page, relay: OwnRelay, id: string): Promise<void> {
  await page.goto(`${relay.base}/`);
  await expect(item(page, id)).toBeVisible();
  await press(item(page, id).locator('a'));
  await page.waitForURL(new RegExp(`/s/${id}$`));
}

test('flow 22: a session started in a terminal is listed, opened, resumed, forked and rewound', async ({ page, backend, uid }, testInfo) => {
  test.skip(backend.name !== 'real', 'the real CLI writes the transcript (the demo variant is below)');
  test.setTimeout(240_000);
  const config = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-e2e-claude-config-'));
  const work = path.join(backend.workDir, `cli-sessions-${uid}`);
  fs.mkdirSync(work, { recursive: true });
  // Two turns in a terminal, outside any relay.
  const env = { PATH: process.env.PATH, ...backend.agentEnv, CLAUDE_CONFIG_DIR: config };
  const first = `e2e-cli-first papaya ${uid}`;
  const second = `e2e-cli-second quince ${uid}`;
  const out1 = JSON.parse(execFileSync(backend.claudeBin!, ['-p', first, '--output-format', 'json'], { cwd: work, env, encoding: 'utf8', timeout: 120_000 }));
  const cliId: string = out1.session_id;
  execFileSync(backend.claudeBin!, ['-p', second, '--resume', cliId, '--output-format', 'json'], { cwd: work, env, encoding: 'utf8', timeout: 120_000 });

  const relay = await startRelay(backend, `relay-cli-sessions-${testInfo.project.name}-${uid}`, ['--claude-config-dir', config], { tls: false, cwd: work });
  try {
    const fakeRequests = async (): Promise<Array<Record<string, any>>> =>
      (await (await page.request.get(`${backend.fakeModel}/_fake/requests`)).json()).requests;
    const sentWith = async (marker: string): Promise<string> => {
      let found = '';
      await expect
        .poll(async () => {
          const r = (await fakeRequests()).filter((q) => (q.last_user_text ?? '').includes(marker));
          found = r.length ? JSON.stringify(r[r.length - 1].body.messages) : '';
          return found.length > 0;
        }, { timeout: 60_000, message: `the fake model got "${marker}"` })
        .toBe(true);
      return found;
    };

    // Listed beside the relay's sessions, as the CLI's.
    await openConsole(page, { ...backend, base: relay.base } as BackendInfo, '/', relay.base);
    await expect(item(page, cliId)).toHaveAttribute('data-origin', 'cli');
    await expect(item(page, cliId)).toContainText(first);
    await expect(item(page, cliId)).toContainText('Terminal');
    await shot(page, 'list', testInfo.project.name);

    // Opened: its history, rendered like a live session's.
    await openFromList(page, relay, cliId);
    await expect(tid(page, 'cli-session-banner')).toBeVisible();
    await expect(userMessages(page).filter({ hasText: first })).toHaveCount(1);
    await expect(userMessages(page).filter({ hasText: second })).toHaveCount(1);
    await expect(assistantTexts(page).filter({ hasText: 'E2E-DEFAULT' })).toHaveCount(2);
    await shot(page, 'opened', testInfo.project.name);

    // Resumed by sending a message: a relay session continues it in the same view.
    const third = `e2e-cli-third resumed ${uid}`;
    await sendMessage(page, third);
    await page.waitForURL(/\/s\/cse_[0-9a-f]+$/, { timeout: 30_000 });
    const resumedId = sessionIdFromUrl(page);
    await expect(assistantTexts(page).filter({ hasText: 'E2E-DEFAULT' })).toHaveCount(3, { timeout: 60_000 });
    await expect(userMessages(page).filter({ hasText: first })).toHaveCount(1);
    const resumedRequest = await sentWith(third);
    expect(resumedRequest, 'the resumed turn carries the earlier conversation').toContain('papaya');
    expect(resumedRequest).toContain('quince');
    // Listed once: as the relay's now.
    await expect(item(page, resumedId)).toHaveAttribute('data-origin', 'relay');
    await expect(item(page, cliId)).toHaveCount(0);

    // Restore files to before the resumed message: a preview, or a clear refusal.
    const thirdRow = userMessages(page).filter({ hasText: third });
    await press(thirdRow.getByTestId('message-rewind'));
    const answer = tid(page, 'rewind-preview').or(tid(page, 'rewind-refused'));
    await expect(answer).toBeVisible({ timeout: 30_000 });
    await expect(answer).toContainText(/would change|Nothing to restore|cannot be restored/);
    await shot(page, 'rewind', testInfo.project.name);

    // Fork before the second prompt: a new session with only the first exchange.
    const secondRow = userMessages(page).filter({ hasText: second });
    await press(secondRow.getByTestId('message-fork'));
    await expect.poll(() => sessionIdFromUrl(page), { timeout: 30_000 }).not.toBe(resumedId);
    const forkId = sessionIdFromUrl(page);
    expect(forkId).toMatch(/^cse_/);
    await expect(tid(page, 'composer-input')).toHaveValue(second);
    await expect(userMessages(page).filter({ hasText: first })).toHaveCount(1);
    await expect(userMessages(page).filter({ hasText: second })).toHaveCount(0);
    const forked = `e2e-cli-fork branch ${uid}`;
    await sendMessage(page, forked);
    const forkRequest = await sentWith(forked);
    expect(forkRequest).toContain('papaya');
    expect(forkRequest, 'the fork holds only the conversation before that message').not.toContain('quince');
    expect(forkRequest).not.toContain('e2e-cli-third');
    // Listed right after the session it came from, marked as a fork.
    await expect(item(page, forkId)).toHaveAttribute('data-origin', 'relay');
    await expect(item(page, forkId).getByTestId('session-fork-of')).toContainText('Fork of');
    const ids = await page.locator('[data-testid="session-item"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-session-id')));
    expect(ids.indexOf(forkId), `${ids}`).toBe(ids.indexOf(resumedId) + 1);
    await expect(assistantTexts(page).filter({ hasText: 'E2E-DEFAULT' })).toHaveCount(2, { timeout: 60_000 });
    await shot(page, 'fork', testInfo.project.name);
    await page.goto(`${relay.base}/`);
    await shot(page, 'list-after', testInfo.project.name);
  } finally {
    await relay.stop();
  }
});

test('flow 22 (demo): a transcript is listed, opened and resumed with the scripted agent; forking a demo session is refused', async ({ page, backend, uid }, testInfo) => {
  test.skip(backend.name !== 'demo', 'the demo variant');
  test.setTimeout(120_000);
  const config = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-e2e-claude-config-'));
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-e2e-cli-work-')));
  // A real transcript (CLI 2.1.332), moved to a directory that exists here.
  const id = '27784601-dc95-46a5-9f01-072efd77a9f0';
  const dir = path.join(config, 'projects', work.replace(/[/.]/g, '-'));
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${id}.jsonl`), fs.readFileSync(FIXTURE, 'utf8').split('/tmp/h15x/work').join(work));
  const relay = await startRelay(backend, `relay-cli-sessions-${testInfo.project.name}-${uid}`, ['--claude-config-dir', config], { tls: false, cwd: work });
  try {
    await openConsole(page, { ...backend, base: relay.base } as BackendInfo, '/', relay.base);
    await expect(item(page, id)).toHaveAttribute('data-origin', 'cli');
    await expect(item(page, id)).toContainText('first prompt alpha');
    await openFromList(page, relay, id);
    await expect(tid(page, 'cli-session-banner')).toBeVisible();
    await expect(userMessages(page).filter({ hasText: 'please make the file beta' })).toHaveCount(1);
    await expect(assistantTexts(page).filter({ hasText: 'Created a.txt.' })).toHaveCount(2);
    // A terminal session is not live: restoring files is refused, saying why.
    await press(userMessages(page).filter({ hasText: 'please make the file beta' }).getByTestId('message-rewind'));
    await expect(tid(page, 'rewind-refused')).toContainText('not running under the relay');
    await shot(page, 'demo-opened', testInfo.project.name);

    await sendMessage(page, `hello again ${uid}`);
    await page.waitForURL(/\/s\/cse_[0-9a-f]+$/, { timeout: 30_000 });
    await expect(userMessages(page).filter({ hasText: 'first prompt alpha' })).toHaveCount(1);
    await expect(userMessages(page).filter({ hasText: `hello again ${uid}` })).toHaveCount(1);
    await expect(assistantTexts(page).last()).not.toContainText('Created a.txt.', { timeout: 30_000 });
    // The demo agent writes no transcript: a fork of its session is refused clearly.
    await press(userMessages(page).filter({ hasText: `hello again ${uid}` }).getByTestId('message-fork'));
    await expect(tid(page, 'fork-failed')).toContainText('transcript');
    await shot(page, 'demo-resumed', testInfo.project.name);

    // A long transcript opens on its last 1,000 frames; "Show earlier" adds the ones before.
    const longId = '27784601-dc95-46a5-9f01-0000000000aa';
    const lines = fs.readFileSync(FIXTURE, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
    const userLine = lines.find((v) => v.type === 'user' && v.message?.content === 'first prompt alpha');
    const answerLine = lines.find((v) => v.type === 'assistant');
    const long: string[] = [];
    let parent: string | null = null;
    const pairs = 600;
    for (let i = 0; i < pairs; i++) {
      const u = `00000000-0000-4000-8000-${String(2 * i).padStart(12, '0')}`;
      const a = `00000000-0000-4000-8000-${String(2 * i + 1).padStart(12, '0')}`;
      long.push(JSON.stringify({ ...userLine, uuid: u, parentUuid: parent, sessionId: longId, cwd: work, message: { role: 'user', content: `long prompt ${i} kiwi` } }));
      long.push(JSON.stringify({ ...answerLine, uuid: a, parentUuid: u, sessionId: longId, cwd: work,
        message: { ...answerLine.message, id: `msg_long_${i}`, content: [{ type: 'text', text: `long answer ${i} kiwi` }] } }));
      parent = a;
    }
    fs.writeFileSync(path.join(dir, `${longId}.jsonl`), long.join('\n') + '\n');
    await openFromList(page, relay, longId);
    // 1,200 frames and the closing result and idle: the last 1,000 shown.
    await expect(tid(page, 'cli-history-partial')).toContainText(`the last 1000 of ${2 * pairs + 2}`);
    await expect(userMessages(page).filter({ hasText: `long prompt ${pairs - 1} kiwi` })).toHaveCount(1);
    await expect(userMessages(page).filter({ hasText: 'long prompt 0 kiwi' })).toHaveCount(0);
    await shot(page, 'demo-long-partial', testInfo.project.name);
    await press(tid(page, 'cli-show-earlier'));
    await expect(tid(page, 'cli-history-partial')).toHaveCount(0);
    // The transcript is virtualized: its top, scrolled to, is the first prompt.
    await expect(async () => {
      await scrollTranscriptToTop(page);
      await expect(userMessages(page).filter({ hasText: 'long prompt 0 kiwi' })).toHaveCount(1, { timeout: 1000 });
    }).toPass({ timeout: 20_000 });
    await shot(page, 'demo-long-earlier', testInfo.project.name);
  } finally {
    await relay.stop();
  }
});
