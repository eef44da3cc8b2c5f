// Flow 30 (issue 28): a Claude Code session running in a terminal, live. A scripted terminal posts the
// hooks CLI 2.1.332 posts (shaped as the real CLI's in crates/relay/tests/terminal_cli.rs) with a hook credential and appends its transcript as the CLI
// writes it (the real CLI through these hooks is tested in crates/relay/tests/terminal_cli.rs). The session
// appears in the list by itself (data-origin="cli"), its text streams in as the transcript grows, its
// permission prompt is the usual dialog — the command edited there is what the hook answers — a message
// written here continues the turn through the Stop hook, and the Notifications panel holds the switch
// "Send terminal prompts to my phone". Desktop and phone.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Page } from '@playwright/test';
import { test, expect } from '../support/fixtures';
import { assistantTexts, dialog, openConsole, press, sendMessage, tid, userMessages } from '../support/console';
import { startRelay } from '../support/relay';
import { readState, type BackendInfo } from '../support/state';

const SHOTS = path.resolve(__dirname, '../artifacts/screenshots');

async function shot(page: Page, name: string, project: string): Promise<void> {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `30-terminal-live--${name}--${project}.png`) });
}

/** A Claude Code session in a terminal, as its hooks and transcript show it. */
class Terminal {
  readonly id = crypto.randomUUID();
  readonly transcript: string;
  constructor(
    private readonly base: string,
    private readonly token: string,
    readonly cwd: string,
    config: string,
  ) {
    const dir = path.join(config, 'projects', cwd.replace(/[/.]/g, '-'));
    fs.mkdirSync(dir, { recursive: true });
    this.transcript = path.join(dir, `${this.id}.jsonl`);
  }
  async hook(event: string, extra: Record<string, unknown> = {}): Promise<any> {
    const r = await fetch(`${this.base}/v1/hooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        hook_event_name: event, session_id: this.id, transcript_path: this.transcript, cwd: this.cwd,
        permission_mode: 'default', ...extra,
      }),
    });
    expect(r.status, `${event} answered`).toBe(200);
    return r.json();
  }
  append(line: Record<string, unknown>): void {
    fs.appendFileSync(this.transcript, JSON.stringify({ isSidechain: false, uuid: crypto.randomUUID(), sessionId: this.id, cwd: this.cwd, ...line }) + '\n');
  }
  prompt(text: string): void {
    this.append({ type: 'user', timestamp: new Date().toISOString(), message: { role: 'user', content: text } });
  }
  say(text: string, extra: unknown[] = []): void {
    this.append({
      type: 'assistant',
      message: { id: `msg_${crypto.randomUUID()}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text }, ...extra], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } },
    });
  }
}

test('flow 30: a terminal session shows live, its prompt is answered here with an edited command, a message continues it', async ({ page, backend, uid }, testInfo) => {
  test.skip(backend.name !== 'demo', 'a scripted terminal (the real CLI runs through the same hooks in the relay tests)');
  test.setTimeout(120_000);
  const config = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-e2e-claude-config-'));
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-e2e-terminal-work-')));
  const relay = await startRelay(backend, `relay-terminal-live-${testInfo.project.name}-${uid}`, ['--claude-config-dir', config], { tls: false, cwd: work });
  try {
    const minted = await fetch(`${relay.base}/v1/hooks/credentials`, {
      method: 'POST',
      headers: { authorization: `Bearer ${readState().token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(minted.status).toBe(201);
    const { token } = await minted.json();
    const term = new Terminal(relay.base, token, work, config);

    await openConsole(page, { ...backend, base: relay.base } as BackendInfo, '/', relay.base);
    await expect(tid(page, 'session-list')).toBeVisible();
    // The terminal starts a turn: the session appears by itself, as Claude Code's, running.
    const prompt = `terminal prompt mango ${uid}`;
    term.prompt(prompt);
    expect(await term.hook('UserPromptSubmit', { prompt })).toEqual({});
    const item = page.locator('[data-testid="session-item"][data-origin="cli"]').filter({ hasText: work.split('/').pop()! });
    await expect(item).toBeVisible({ timeout: 15_000 });
    await press(item.locator('a'));
    await page.waitForURL(/\/s\/cse_[0-9a-f]+$/);
    await expect(tid(page, 'terminal-live-banner')).toContainText('Live from a terminal');
    await expect(userMessages(page).filter({ hasText: prompt })).toHaveCount(1);
    // Its text streams in as the terminal writes it.
    term.say(`Looking at it, papaya ${uid}.`);
    await expect(assistantTexts(page).filter({ hasText: `papaya ${uid}` })).toHaveCount(1, { timeout: 5_000 });

    // A permission prompt: the same dialog; the command edited here is what the hook answers.
    const asked = { tool_name: 'Bash', tool_input: { command: 'touch original.txt', description: 'make a file' },
      permission_suggestions: [{ type: 'setMode', mode: 'acceptEdits', destination: 'session' }] };
    const answer = term.hook('PermissionRequest', asked);
    const dlg = dialog(page);
    await expect(dlg).toBeVisible();
    await expect(dlg).toHaveAttribute('data-tool-name', 'Bash');
    const field = tid(page, 'permission-field-command');
    await expect(field).toHaveValue('touch original.txt');
    await shot(page, 'prompt', testInfo.project.name);
    await field.fill(`touch edited-${uid}.txt`);
    await press(tid(page, 'permission-allow'));
    const decided = await answer;
    expect(decided.hookSpecificOutput.decision.behavior).toBe('allow');
    expect(decided.hookSpecificOutput.decision.updatedInput.command).toBe(`touch edited-${uid}.txt`);
    await expect(dlg).toHaveCount(0);

    // A message written here waits for the turn to end and continues it through the Stop hook.
    const follow = `and now list them, kiwi ${uid}`;
    await sendMessage(page, follow);
    // The row shows at once; the turn ends once the relay has the message (the full run on a loaded
    // machine saw the Stop hook overtake the console's POST: nothing queued yet, the turn closed).
    const sid = new URL(page.url()).pathname.split('/').pop()!;
    await expect
      .poll(async () => {
        const r = await fetch(`${relay.base}/v1/code/sessions/${sid}/events?limit=500`, { headers: { authorization: `Bearer ${readState().token}` } });
        const { events } = (await r.json()) as { events: Array<{ source?: string; payload: Record<string, any> }> };
        return events.some((e) => e.source === 'client' && e.payload.type === 'user' && JSON.stringify(e.payload.message).includes(follow));
      }, { message: 'the relay has the message' })
      .toBe(true);
    const stop = await term.hook('Stop', { stop_hook_active: false, last_assistant_message: 'Made it.' });
    expect(stop).toEqual({ decision: 'block', reason: follow });
    term.say(`Listed them, kiwi ${uid}.`);
    expect(await term.hook('Stop', { stop_hook_active: true, last_assistant_message: 'Listed.' })).toEqual({});
    await expect(assistantTexts(page).filter({ hasText: `Listed them, kiwi ${uid}` })).toHaveCount(1);
    await expect(userMessages(page).filter({ hasText: follow })).toHaveCount(1);
    await expect(tid(page, 'session-state')).toHaveAttribute('data-state', 'idle');
    await shot(page, 'continued', testInfo.project.name);

    // The switch, in the Notifications panel (controllers).
    await page.goto(`${relay.base}/`);
    await press(tid(page, 'notifications-open'));
    const sw = tid(page, 'terminal-prompts-switch');
    await expect(sw).toBeChecked();
    await sw.uncheck();
    await expect.poll(async () => (await (await fetch(`${relay.base}/v1/hooks`, { headers: { authorization: `Bearer ${token}` } })).json()).send_to_phone).toBe(false);
    await shot(page, 'switch', testInfo.project.name);
    // Off: a prompt is left to the terminal at once.
    expect(await term.hook('PermissionRequest', asked)).toEqual({});

    // The terminal session ends there.
    await term.hook('SessionEnd', { reason: 'prompt_input_exit' });
  } finally {
    await relay.stop();
  }
});
