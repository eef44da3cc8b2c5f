// Flow 19 (phone): the console in the pocket. A relay over HTTPS with its own self-signed certificate
// (trusted by pinning its key, as a person does by comparing the fingerprint), the installable app with
// its service worker, notifications enabled from the Notifications panel, and a permission prompt that
// reaches the phone as a Web Push and is answered from the notification:
//   relay --(VAPID + aes128gcm Web Push)--> local push service (support/push.ts: verifies, decrypts)
//         --(CDP ServiceWorker.deliverPushMessage)--> service worker --> notification with Allow / Deny
//   Allow --(POST /v1/push/answer with the login cookie)--> relay --> exactly one answer at the agent.
// Then `resolved` closes the notification, a prompt answered in the console first makes the
// notification's answer say so, and with the relay gone the app still opens from cache.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Page, type Worker } from '@playwright/test';
import { test, expect } from '../support/fixtures';
import { dialog, press, sendMessage, tid } from '../support/console';
import { PushReceiver, deliver, stubPushManager, swRegistrationId, type ReceivedPush } from '../support/push';
import { startRelay, type OwnRelay } from '../support/relay';
import { chromiumArgs, chromiumPath } from '../support/chromium';
import { readState } from '../support/state';

interface Shown {
  tag: string;
  title: string;
  body: string;
  actions: string[];
}

const notifications = (page: Page, tag?: string): Promise<Shown[]> =>
  page.evaluate(async (tag) => {
    const reg = await navigator.serviceWorker.ready;
    const ns = await reg.getNotifications(tag ? { tag } : undefined);
    return ns.map((n) => ({ tag: n.tag, title: n.title, body: n.body, actions: ((n as any).actions ?? []).map((a: any) => a.action) }));
  }, tag);

/** Clicks a notification's action (or the notification itself) inside the service worker. */
async function clickNotification(sw: Worker, tag: string, action: string): Promise<void> {
  await sw.evaluate(
    async ({ tag, action }) => {
      const g = self as any;
      const [n] = await g.registration.getNotifications({ tag });
      if (!n) throw new Error(`no notification with tag ${tag}`);
      g.dispatchEvent(new g.NotificationEvent('notificationclick', { notification: n, action }));
      await g.__bridgeLastAction;
    },
    { tag, action },
  );
}

test('flow 19: HTTPS, installable offline app, and a permission prompt answered from a push notification', async ({
  backend,
  uid,
  shots,
  workDir,
}, testInfo) => {
  test.skip(!testInfo.project.use.isMobile, 'the pocket flow runs on the phone profile');
  test.setTimeout(180_000);
  const push = new PushReceiver();
  await push.start();
  let relay: OwnRelay | undefined;
  let ctx: BrowserContext | undefined;
  try {
    relay = await startRelay(backend, `relay-pocket-${backend.name}-${uid}`, [
      '--push-endpoint-allow',
      `${push.origin}/`,
      '--push-min-turn-secs',
      '0',
    ], { copyStatic: true });
    expect(relay.base).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(relay.banner.join('\n'), 'the banner prints the certificate fingerprint').toMatch(/([0-9A-F]{2}:){31}[0-9A-F]{2}/i);

    const use = testInfo.project.use;
    const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-e2e-profile-'));
    ctx = await chromium.launchPersistentContext(userDir, {
      executablePath: chromiumPath,
      args: [
        ...chromiumArgs,
        // The relay's self-signed certificate, pinned by its key (what comparing the fingerprint does).
        `--ignore-certificate-errors-spki-list=${relay.spki}`,
      ],
      viewport: use.viewport ?? { width: 390, height: 844 },
      isMobile: use.isMobile,
      hasTouch: use.hasTouch,
      deviceScaleFactor: use.deviceScaleFactor,
      serviceWorkers: 'allow',
    });
    await ctx.grantPermissions(['notifications'], { origin: relay.base });
    const sub = push.subscription(`device-${uid}`);
    await ctx.addInitScript(stubPushManager(sub));
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    shots.set('pocket', page);

    // Sign in over HTTPS: the cookie is __Host- prefixed and Secure.
    await page.goto(`${relay.base}/#login=${relay.login}`);
    await expect(tid(page, 'session-list').or(tid(page, 'transcript')).first()).toBeAttached();
    await expect(page).not.toHaveURL(/#login=/);
    const cookie = (await ctx.cookies(relay.base)).find((c) => c.name === '__Host-bridge_session');
    expect(cookie, 'login cookie __Host-bridge_session').toBeTruthy();
    expect(cookie!.secure && cookie!.httpOnly && cookie!.sameSite === 'Strict').toBe(true);

    // The service worker installs and, after a reload, controls the page.
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
    await page.reload();
    await expect.poll(() => page.evaluate(() => !!navigator.serviceWorker.controller)).toBe(true);
    const cdp = await ctx.newCDPSession(page);
    const inst = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: unknown[] };
    expect(inst.installabilityErrors, 'Chromium says the app is installable').toEqual([]);
    const api = await newApi(relay);
    const manifest = await (await api.get('/manifest.webmanifest')).json();
    expect(manifest).toMatchObject({ id: '/', scope: '/', start_url: '/', display: 'standalone' });
    expect(manifest.shortcuts?.[0]?.name).toBe('Needs you');
    const sizes = (manifest.icons as Array<{ sizes: string; type: string; purpose?: string }>).map((i) => `${i.sizes} ${i.type} ${i.purpose ?? 'any'}`);
    expect(sizes).toEqual(expect.arrayContaining(['192x192 image/png any', '512x512 image/png any', '512x512 image/png maskable']));
    const swResp = await api.get('/sw.js');
    expect(swResp.headers()['cache-control']).toMatch(/no-cache/);

    // Enable notifications on this device.
    await expect(tid(page, 'session-list').or(tid(page, 'transcript')).first()).toBeAttached();
    await press(tid(page, 'notifications-open').first());
    const panel = tid(page, 'notifications-settings');
    await expect(panel).toBeVisible();
    await press(tid(page, 'notifications-enable'));
    await expect(tid(page, 'notifications-device')).toHaveCount(1);
    await page.screenshot({ path: testInfo.outputPath('notifications-panel.png') });
    fs.copyFileSync(testInfo.outputPath('notifications-panel.png'), shotPath(`flow-19-notifications-panel--${testInfo.project.name}.png`));

    // The API (bearer, server side): the subscription is registered; its keys are never echoed.
    const subs = await (await api.get('/v1/push/subscriptions')).json();
    const list = subs.subscriptions ?? subs;
    expect(list).toHaveLength(1);
    expect(JSON.stringify(subs)).not.toContain(sub.keys.auth);
    const deviceId = list[0].id as string;

    // A session asks for permission while the phone shows something else.
    const created = await api.post('/v1/code/sessions', { data: { cwd: workDir, title: 'flow 19' } });
    expect(created.status()).toBe(201);
    const sid = (await created.json()).session_id as string;
    await page.goto(`${relay.base}/s/${sid}`);
    await expect(tid(page, 'connection-status')).toHaveAttribute('data-state', 'live', { timeout: 20_000 });
    await sendMessage(page, `e2e-bash please create a file ${uid}`);
    await expect(dialog(page)).toBeVisible({ timeout: 30_000 });
    // On the phone, Allow and Deny are on screen (a sticky bar) and big enough to tap.
    const vp = page.viewportSize()!;
    for (const id of ['permission-allow', 'permission-deny']) {
      const box = (await tid(page, id).boundingBox())!;
      expect(box.y + box.height, `${id} is on screen`).toBeLessThanOrEqual(vp.height);
      expect(box.height, `${id} is a 44 px touch target`).toBeGreaterThanOrEqual(44);
    }
    await page.screenshot({ path: shotPath(`flow-19-dialog--${testInfo.project.name}.png`) });
    await page.goto(`${relay.base}/`);
    await expect(tid(page, 'session-list')).toBeAttached();

    const needs = await push.waitFor((p) => p.type === 'needs_you' && p.session_id === sid);
    expect(needs.payload).toMatchObject({ v: 1, tool_name: 'Bash', url: `/s/${sid}`, answerable: true });
    expect(needs.payload.body).toContain('touch e2e-original.txt');
    expect(needs.headers['urgency']).toBe('high');
    expect(needs.headers['ttl']).toBe('3600');
    expect(String(needs.headers['topic'] ?? '')).toMatch(/^[A-Za-z0-9_-]{1,32}$/);
    expect(needs.jwt.claims.aud).toBe(push.origin);
    const rid = needs.payload.request_id as string;

    // Headless Chromium's notification platform starts lazily; under load the first notification of
    // a browser can vanish from getNotifications() right after it was shown. Show and close one first.
    await expect
      .poll(
        () =>
          page.evaluate(async () => {
            const reg = await navigator.serviceWorker.ready;
            await reg.showNotification('warm-up', { tag: 'e2e:warm-up', silent: true });
            await new Promise((r) => setTimeout(r, 300));
            const n = await reg.getNotifications({ tag: 'e2e:warm-up' });
            n.forEach((x) => x.close());
            return n.length;
          }),
        { message: 'the notification platform is up', timeout: 30_000 },
      )
      .toBe(1);
    const regId = await swRegistrationId(cdp, `${relay.base}/`);
    const sw = (): Worker => {
      const w = ctx!.serviceWorkers().find((x) => x.url().startsWith(relay!.base));
      if (!w) throw new Error('no service worker in the context');
      return w;
    };
    await deliver(cdp, relay.base, regId, needs);
    const tag = `bridge:${sid}:${rid}`;
    const lastPush = () =>
      sw()
        .evaluate(async () => JSON.stringify(await (self as any).__bridgeLastPush))
        .catch((e) => String(e));
    await expect
      .poll(() => notifications(page, tag).then((n) => n.length), { message: 'the notification is shown' })
      .toBe(1)
      .catch(async (e) => {
        throw new Error(`${(e as Error).message}\nservice worker's last push: ${await lastPush()}`);
      });
    const [shown] = await notifications(page, tag);
    expect(shown.actions).toEqual(['allow', 'deny']);
    expect(shown.body).toContain('touch e2e-original.txt');

    // Allow from the notification.
    await clickNotification(sw(), tag, 'allow');
    await expect.poll(() => notifications(page, tag).then((n) => n.length)).toBe(0);

    // The agent got exactly one answer: the unedited input, from this device.
    const answers = async () =>
      (await events(api, sid)).filter((e) => e.source === 'client' && e.payload.type === 'control_response' && e.payload.response?.request_id === rid);
    await expect.poll(async () => (await answers()).length).toBe(1);
    const [answer] = await answers();
    expect(answer.payload.response.response.behavior).toBe('allow');
    expect(answer.payload.response.response.updatedInput.command).toBe('touch e2e-original.txt');
    const audit = fs
      .readFileSync(path.join(relay.dataDir, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((a) => a.request_id === rid);
    expect(audit).toHaveLength(1);
    expect(audit[0].who.device?.id).toBe(deviceId);

    // `resolved` reaches the device and closes whatever is left of that prompt; the turn finishes.
    const resolved = await push.waitFor((p) => p.type === 'resolved' && p.request_id === rid);
    await deliver(cdp, relay.base, regId, resolved);
    const done = await push.waitFor((p) => p.type === 'turn_done' && p.session_id === sid, 60_000);
    expect(done.payload.body).toMatch(/\$\d/);
    if (backend.name === 'real') {
      await expect.poll(() => fs.existsSync(path.join(workDir, 'e2e-original.txt')), { message: 'the allowed command ran' }).toBe(true);
    }

    // A second prompt, answered in the console first: the notification's Allow then says so.
    await page.goto(`${relay.base}/s/${sid}`);
    await expect(tid(page, 'connection-status')).toHaveAttribute('data-state', 'live', { timeout: 20_000 });
    await sendMessage(page, `e2e-bash please create a file ${uid} again`);
    const second = await push.waitFor((p) => p.type === 'needs_you' && p.session_id === sid && p.request_id !== rid, 45_000);
    const tag2 = `bridge:${sid}:${second.payload.request_id}`;
    await expect(dialog(page)).toBeVisible();
    await press(tid(page, 'permission-allow'));
    await expect(dialog(page)).toBeHidden();
    await page.goto(`${relay.base}/`);
    await deliver(cdp, relay.base, regId, second);
    await expect.poll(() => notifications(page, tag2).then((n) => n.length)).toBe(1);
    await clickNotification(sw(), tag2, 'allow');
    await expect
      .poll(() => notifications(page, tag2).then((n) => n.map((x) => `${x.title} ${x.body}`).join(' ')))
      .toMatch(/already answered|answered first/i);
    const rid2 = second.payload.request_id as string;
    const answers2 = (await events(api, sid)).filter((e) => e.source === 'client' && e.payload.type === 'control_response' && e.payload.response?.request_id === rid2);
    expect(answers2, 'one answer for the second prompt: the console one').toHaveLength(1);

    // A notification never opens another origin, and Allow on one the relay did not mark answerable
    // (a push that says so only in its actions) opens the console instead of answering.
    const crafted = { v: 1, type: 'needs_you', session_id: sid, request_id: 'crafted-1', title: 'Claude needs you', body: 'x', url: 'https://evil.example/s/x', answerable: false };
    await cdp.send('ServiceWorker.deliverPushMessage', { origin: relay.base, registrationId: regId, data: JSON.stringify(crafted) });
    const tag3 = `bridge:${sid}:crafted-1`;
    await expect.poll(() => notifications(page, tag3).then((n) => n.length)).toBe(1);
    expect((await notifications(page, tag3))[0].actions, 'no Allow / Deny on a prompt that is not answerable').toEqual([]);
    const clicked = await sw().evaluate(async (tag) => {
      const g = self as any;
      const [n] = await g.registration.getNotifications({ tag });
      g.dispatchEvent(new g.NotificationEvent('notificationclick', { notification: n, action: 'allow' }));
      return JSON.stringify(await g.__bridgeLastAction);
    }, tag3);
    expect(JSON.parse(clicked), 'the click opened the console, on this origin, and answered nothing').toMatchObject({ url: '/' });
    expect(JSON.parse(clicked).ok, 'no answer was sent').toBeUndefined();

    // A new build lands: the app offers it and waits for a click, so a draft is never lost to a reload.
    fs.appendFileSync(path.join(relay.staticDir, 'sw.js'), `\n// e2e: a new build ${uid}\n`);
    await page.goto(`${relay.base}/s/${sid}`);
    await expect(tid(page, 'connection-status')).toHaveAttribute('data-state', 'live', { timeout: 20_000 });
    const draft = `a draft being written ${uid}`;
    await tid(page, 'composer-input').fill(draft);
    // The on-screen keyboard takes the bottom of the screen: the composer stays above it.
    await tid(page, 'composer-input').focus();
    await page.setViewportSize({ width: vp.width, height: 480 });
    await expect
      .poll(async () => {
        const b = (await tid(page, 'composer-input').boundingBox())!;
        return b.y >= 0 && b.y + b.height <= 480;
      }, { message: 'the composer is above the keyboard' })
      .toBe(true);
    await page.screenshot({ path: shotPath(`flow-19-keyboard--${testInfo.project.name}.png`) });
    await page.setViewportSize(vp);
    // The relay serves the console it read at start (never files changed under it): the new build
    // reaches it with a restart, as an upgrade does; the page keeps its draft through it.
    await relay.restart();
    await page.evaluate(() => navigator.serviceWorker.getRegistration().then((r) => r?.update()));
    await expect(tid(page, 'update-available')).toBeVisible({ timeout: 20_000 });
    let reloaded = false;
    page.once('load', () => (reloaded = true));
    await page.waitForTimeout(2_000);
    expect(reloaded, 'the console does not reload by itself').toBe(false);
    await expect(tid(page, 'composer-input')).toHaveValue(draft);
    await page.screenshot({ path: shotPath(`flow-19-update--${testInfo.project.name}.png`) });
    // The new worker takes over once the old one has nothing in flight, then the page reloads: give a
    // loaded machine time (a CI run once took over 15 s here).
    await Promise.all([page.waitForEvent('load', { timeout: 40_000 }), press(tid(page, 'update-available'))]);
    await expect(tid(page, 'composer-input')).toHaveValue(draft, { timeout: 20_000 });
    await expect(tid(page, 'update-available')).toHaveCount(0);
    // The restart ended the demo session (its agent process went with the old relay): the draft is
    // kept, the composer takes no more messages.
    await expect(tid(page, 'composer-input')).toBeDisabled();

    // The relay goes away: the installed app still opens from cache and says it is offline.
    await relay.stop();
    await page.goto(`${relay.base}/`).catch(() => undefined);
    await expect(page.locator('body')).toContainText(/offline|reconnecting|cannot reach|could not reach/i, { timeout: 20_000 });
    await page.screenshot({ path: shotPath(`flow-19-offline--${testInfo.project.name}.png`) });
    await api.dispose();
  } finally {
    await ctx?.close().catch(() => undefined);
    await relay?.stop();
    await push.stop();
  }
});

function shotPath(name: string): string {
  const dir = path.resolve(__dirname, '../artifacts/screenshots');
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, name);
}

async function newApi(relay: OwnRelay) {
  const { request } = await import('@playwright/test');
  return request.newContext({
    baseURL: relay.base,
    ignoreHTTPSErrors: true,
    extraHTTPHeaders: { Authorization: `Bearer ${readState().token}` },
  });
}

async function events(api: Awaited<ReturnType<typeof newApi>>, sid: string): Promise<Array<{ source?: string; payload: Record<string, any> }>> {
  const r = await api.get(`/v1/code/sessions/${sid}/events?after=0&limit=5000`);
  expect(r.ok(), await r.text()).toBeTruthy();
  return (await r.json()).events;
}

export type { ReceivedPush };
