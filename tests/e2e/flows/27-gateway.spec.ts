// Flow 27 (issue 14): the console against a scale-out gateway. The flow starts its own NATS server
// (JetStream, temp store, free port), one agents relay (`--role agents`, it runs the agent) and one
// gateway relay (`--role gateway`, it runs none), and opens the console on the gateway only: the list
// comes from the registry, "New session" is placed on the agents node, the message goes through the
// gateway to the host, the permission prompt arrives from JetStream, the answer goes back to the host,
// and the result is shown; the header and the list say which host runs the session; NATS stopped,
// the console shows it is reconnecting, and is live again once NATS is back. The host's own API
// confirms the session (and the answer) live there.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { APIRequestContext, Page } from '@playwright/test';
import { test, expect } from '../support/fixtures';
import { dialog, expectLive, expectSessionState, openConsole, press, renderedRows, scrollTranscriptToBottom, sendMessage, tid, toolCalls, waitForTurns } from '../support/console';
import { startNats, type OwnNats } from '../support/nats';
import { startRelay, type OwnRelay } from '../support/relay';

const SHOTS = path.resolve(__dirname, '../artifacts/screenshots');

async function shot(page: Page, name: string, project: string): Promise<void> {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `27-gateway--${project}--${name}.png`) });
}

/**
 * Each assistant text of the transcript shows once (a duplicated event shows the same text twice).
 * The transcript holds one short turn, so every row is rendered: the DOM rows are counted as they
 * are (snapshot() would merge two rows with one uuid).
 */
async function expectEachAssistantTextOnce(page: Page): Promise<void> {
  await scrollTranscriptToBottom(page);
  const texts = await page
    .locator('[data-testid="message"][data-role="assistant"] [data-testid="assistant-text"]')
    .evaluateAll((els) => els.map((e) => (e as HTMLElement).innerText.replace(/\s+/g, ' ').trim()).filter((t) => t !== ''));
  expect(texts.length, 'the transcript has assistant text').toBeGreaterThan(0);
  const twice = texts.filter((t, i) => texts.indexOf(t) !== i);
  expect(twice, `assistant texts shown more than once in ${JSON.stringify(texts)}`).toEqual([]);
  const uuids = (await renderedRows(page)).map((r) => r.uuid).filter((u) => u !== '');
  expect(uuids.filter((u, i) => uuids.indexOf(u) !== i), 'rows shown twice').toEqual([]);
}

test('flow 27: the console on a gateway creates a session on an agents node, runs a turn and answers its prompt', async ({
  page,
  backend,
  uid,
  playwright,
}, testInfo) => {
  test.skip(backend.name !== 'demo', 'the gateway path does not depend on the agent: the demo agent drives it');
  test.setTimeout(120_000);
  const project = testInfo.project.name;
  const host = `e2e-host-${uid}`.replace(/[^A-Za-z0-9_-]/g, '-');
  let nats: OwnNats | undefined;
  let agents: OwnRelay | undefined;
  let gateway: OwnRelay | undefined;
  let hostApi: APIRequestContext | undefined;
  let gwApi: APIRequestContext | undefined;
  try {
    nats = await startNats(`gateway-${project}-${uid}`);
    agents = await startRelay(backend, `relay-agents-${project}-${uid}`, ['--nats', nats.url, '--role', 'agents', '--node-name', host], {
      tls: false,
    });
    gateway = await startRelay(backend, `relay-gateway-${project}-${uid}`, ['--nats', nats.url, '--role', 'gateway', '--node-name', `e2e-gw-${uid}`.replace(/[^A-Za-z0-9_-]/g, '-')], {
      tls: false,
      agent: false,
    });
    const auth = { Authorization: `Bearer ${gateway.login}` };
    hostApi = await playwright.request.newContext({ baseURL: agents.base, extraHTTPHeaders: auth });
    gwApi = await playwright.request.newContext({ baseURL: gateway.base, extraHTTPHeaders: auth });
    // The gateway places sessions only on a node whose heartbeat it has seen.
    await expect
      .poll(async () => ((await (await gwApi!.get('/healthz')).json()).nats?.role as string) ?? '', { message: 'the gateway is up on NATS' })
      .toBe('gateway');

    await openConsole(page, backend, '/', gateway.base);
    await expect(tid(page, 'session-list')).toBeAttached();
    await press(tid(page, 'new-session').or(page.getByRole('button', { name: /new session/i })).first());
    await press(tid(page, 'new-session-create').or(page.getByRole('button', { name: /^(create|start)( session)?$/i })).first());
    await page.waitForURL(/\/s\/[^/?#]+$/);
    expect(new URL(page.url()).origin, 'the console stays on the gateway').toBe(gateway.base);
    const sid = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await expect(tid(page, 'transcript')).toBeVisible();
    await expectLive(page);

    // The session runs on the agents node, and the gateway lists it with that host.
    const onHost = await hostApi.get(`/v1/code/sessions/${sid}`);
    expect(onHost.status(), 'the agents node runs the session').toBe(200);
    const list = (await (await gwApi.get('/v1/code/sessions')).json()).sessions as Array<{ id: string; host?: string }>;
    expect(list.find((s) => s.id === sid)?.host).toBe(host);

    await sendMessage(page, `e2e-bash please create a file ${uid}`);
    const dlg = dialog(page);
    await expect(dlg).toBeVisible();
    await expect(dlg).toHaveAttribute('data-tool-name', 'Bash');
    await expectSessionState(page, 'requires_action');
    await shot(page, 'prompt', project);
    await press(tid(page, 'permission-allow'));
    await expect(dlg).toBeHidden();

    const card = toolCalls(page, 'Bash').last();
    await expect(card).toHaveAttribute('data-status', 'done');
    await expect(tid(page, 'tool-result').last()).toContainText('touch e2e-original.txt');
    await waitForTurns(page, 1);
    await expectSessionState(page, 'idle');
    // Every assistant text once (the host's burst reaches the gateway as one JetStream message of
    // several events, and the console may still be loading its decoding part when frames arrive).
    await expectEachAssistantTextOnce(page);
    // A desktop shows the list beside the session: it refreshes when the header's state changes,
    // so it says the same at once, not a list poll (4 s) later.
    const listed = page.locator(`[data-testid="session-item"][data-session-id="${sid}"]`);
    if (await listed.isVisible()) {
      await expect(listed, 'the list shows the state the header shows').toHaveAttribute('data-state', 'idle', { timeout: 1_500 });
    }
    await shot(page, 'result', project);

    // The console says which host runs the session: in the header and in the list (small, inert text).
    await expect(tid(page, 'session-header-host')).toHaveText(`on ${host}`);
    // A phone shows the list or the session; a desktop both.
    const back = page.getByRole('link', { name: 'All sessions' });
    if (await back.isVisible()) await press(back);
    const item = page.locator(`[data-testid="session-item"][data-session-id="${sid}"]`);
    await expect(item).toBeVisible();
    // The list says what the header said once the turn ended.
    await expect(item, 'the list shows the state the header showed').toHaveAttribute('data-state', 'idle', { timeout: 10_000 });
    await expect(item.getByTestId('session-host')).toContainText(`on ${host}`);
    await shot(page, 'list-host', project);
    await press(item.getByRole('link').first());
    await expect(tid(page, 'transcript')).toBeVisible();
    await expectLive(page);
    await expectSessionState(page, 'idle');
    await expectEachAssistantTextOnce(page);

    // NATS goes away: the gateway ends the stream, and the console says it is reconnecting (or
    // offline); NATS is back: the console is live again.
    await nats.pause();
    await expect(tid(page, 'connection-status')).toHaveAttribute('data-state', /reconnecting|offline/, { timeout: 15_000 });
    await shot(page, 'nats-down', project);
    await nats.resume();
    await expectLive(page, 60_000);
    // Resumed from where it stopped: nothing shown twice.
    await expectEachAssistantTextOnce(page);

    // The answer reached the agent on the host, once.
    const events = (await (await hostApi.get(`/v1/code/sessions/${sid}/events`)).json()).events as Array<{
      source: string;
      payload: { type: string; response?: { response?: { behavior?: string } } };
    }>;
    const answers = events.filter((e) => e.source === 'client' && e.payload.type === 'control_response');
    expect(answers.length).toBe(1);
    expect(answers[0].payload.response?.response?.behavior).toBe('allow');
  } finally {
    await hostApi?.dispose();
    await gwApi?.dispose();
    await gateway?.stop();
    await agents?.stop();
    await nats?.stop();
  }
});
