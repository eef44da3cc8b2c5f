// Flow 20: the console embedded in another frontend (issue 11). A host page on another origin (another
// port of 127.0.0.1, served by a tiny node server) frames the console with `?embed=1&session=<id>`
// and talks to it with the versioned postMessage API: `ready`, the host's `auth` token, `send`,
// `needs_you` (the demo prompt asks Bash permission on both backends), `resolved`, `turn_done`,
// `set_theme`, `open_session`. A page on an origin the relay does not list (--embed-origin) cannot
// frame the console (CSP frame-ancestors) and hears nothing. A simulated iOS webview (an injected
// `webkit.messageHandlers.bridgeConsole`) gets `needs_you` as JSON text and answers through
// `window.bridgeConsole.receive(json)`.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FrameLocator, type Page } from '@playwright/test';
import { test, expect } from '../support/fixtures';
import { startRelay, type OwnRelay } from '../support/relay';
import { readState } from '../support/state';

type Msg = { bridge: number; type: string; [k: string]: any };

/** A host page that frames `src` and records every message from `relay` in window.__got. */
const hostPage = (relay: string, src: string) => `<!doctype html>
<html><head><meta charset="utf-8"><title>Host app</title>
<style>body{font:14px system-ui;margin:0;padding:8px;background:#dde3ea} iframe{width:100%;height:560px;border:1px solid #889;border-radius:8px;background:#fff}</style>
</head><body>
<h1 style="font-size:16px;margin:4px 0 8px">Host app (another origin) embedding Bridge Console</h1>
<iframe id="console" title="Bridge Console" src="${src}"></iframe>
<script>
  window.__got = [];
  window.__others = [];
  window.addEventListener('message', (e) => {
    if (e.origin === ${JSON.stringify(relay)}) window.__got.push(e.data); else window.__others.push(e.origin);
  });
  window.send = (msg) => document.getElementById('console').contentWindow.postMessage(msg, ${JSON.stringify(relay)});
</script>
</body></html>`;

async function serve(handler: http.RequestListener): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const got = (page: Page): Promise<Msg[]> => page.evaluate(() => (window as any).__got as Msg[]);

async function waitFor(page: Page, pred: (m: Msg) => boolean, what: string, timeout = 45_000): Promise<Msg> {
  let found: Msg | undefined;
  await expect
    .poll(async () => {
      found = (await got(page)).find(pred);
      return !!found;
    }, { message: `the host receives ${what}`, timeout })
    .toBe(true);
  return found!;
}

test('flow 20: the console embedded in an iframe and a webview talks the bridge message API', async ({
  backend,
  uid,
  shots,
  workDir,
  playwright,
  browser,
}, testInfo) => {
  test.skip(!!testInfo.project.use.isMobile, 'the embedding flow runs on the desktop profiles');
  test.setTimeout(180_000);
  let host: Awaited<ReturnType<typeof serve>> | undefined;
  let stranger: Awaited<ReturnType<typeof serve>> | undefined;
  let relay: OwnRelay | undefined;
  let page: Page | undefined;
  try {
    let hostHtml = '';
    host = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(hostHtml);
    });
    stranger = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(hostHtml);
    });
    // The same host server reached as http://localhost:<port> is another *site* than the relay on 127.0.0.1.
    const crossSite = host.origin.replace('127.0.0.1', 'localhost');
    relay = await startRelay(
      backend,
      `relay-embed-${backend.name}-${uid}`,
      ['--embed-origin', host.origin, '--embed-origin', crossSite],
      { tls: false },
    );
    const token = readState().token;

    // The relay says who may frame the console, and tells the console whom to talk to.
    const index = await fetch(`${relay.base}/`);
    expect(index.headers.get('content-security-policy')).toContain(`frame-ancestors 'self' ${host.origin} ${crossSite};`);
    expect(await (await fetch(`${relay.base}/v1/embed/config`)).json()).toEqual({ bridge: 1, origins: [host.origin, crossSite] });

    const api = await playwright.request.newContext({ baseURL: relay.base, extraHTTPHeaders: { Authorization: `Bearer ${token}` } });
    const create = async (title: string) => {
      const r = await api.post('/v1/code/sessions', { data: { cwd: workDir, title } });
      expect(r.status(), await r.text()).toBe(201);
      return (await r.json()).session_id as string;
    };
    const sid = await create('flow 20 embedded');
    const sid2 = await create('flow 20 second');

    const ctx = await browser.newContext({ viewport: { width: 1000, height: 700 } });
    page = await ctx.newPage();
    shots.set('host', page);
    hostHtml = hostPage(relay.base, `${relay.base}/?embed=1&session=${sid}`);
    await page.goto(`${host.origin}/host.html`);
    const frame: FrameLocator = page.frameLocator('#console');

    // ready: the console listens (before anyone signed in).
    await waitFor(page, (m) => m.bridge === 1 && m.type === 'ready', 'ready');
    // Noise is ignored and never breaks the console.
    await page.evaluate(() => {
      const w = window as any;
      w.send('hello');
      w.send({ bridge: 2, type: 'send', text: 'from the future' });
      w.send({ bridge: 1, type: 'dance' });
      w.send({ bridge: 1, type: 'send' });
    });
    // auth: the host hands a token instead of a URL fragment.
    await page.evaluate((token) => (window as any).send({ bridge: 1, type: 'auth', token }), token);
    await waitFor(page, (m) => m.type === 'state' && m.session_id === sid && m.connection === 'live', 'a live state for the session');
    await expect(frame.getByTestId('transcript')).toBeVisible();
    await expect(frame.getByTestId('session-list'), 'embed=1: no session list').toHaveCount(0);

    // send → needs_you (Bash) → allowed in the frame → resolved, turn_done.
    await page.evaluate((text) => (window as any).send({ bridge: 1, type: 'send', text }), `e2e-bash please create a file ${uid}`);
    const ask = await waitFor(page, (m) => m.type === 'needs_you', 'needs_you');
    expect(ask).toMatchObject({ bridge: 1, session_id: sid, tool_name: 'Bash' });
    expect(typeof ask.request_id).toBe('string');
    expect(ask.summary).toContain('Bash');
    await expect(frame.getByTestId('permission-dialog')).toBeVisible();
    await testInfo.attach('embedded-needs-you', { body: await page.screenshot(), contentType: 'image/png' });
    await page.screenshot({ path: testInfo.outputPath('embedded-needs-you.png') });
    await frame.getByTestId('permission-allow').click();
    await waitFor(page, (m) => m.type === 'resolved' && m.request_id === ask.request_id, 'resolved');
    const done = await waitFor(page, (m) => m.type === 'turn_done', 'turn_done');
    expect(done.session_id).toBe(sid);
    expect(typeof done.cost_usd).toBe('number');
    expect((await got(page)).some((m) => m.type === 'height' && m.px > 0), 'height').toBe(true);
    expect((await got(page)).every((m) => m.bridge === 1), 'every message carries the version').toBe(true);

    // open_link: a link to another origin is handed to the host, the frame does not navigate.
    const inner = page.frames().find((f) => f.url().startsWith(relay!.base))!;
    await inner.evaluate(() => {
      const a = document.createElement('a');
      a.href = 'https://example.com/docs?x=1';
      a.textContent = 'docs';
      a.id = 'e2e-external-link';
      document.querySelector('[data-testid="transcript"]')!.prepend(a);
    });
    await frame.locator('#e2e-external-link').click();
    await waitFor(page, (m) => m.type === 'open_link' && m.url === 'https://example.com/docs?x=1', 'open_link');
    expect(inner.url(), 'the frame stays on the console').toContain(relay.base);

    // set_theme.
    await page.evaluate(() => (window as any).send({ bridge: 1, type: 'set_theme', theme: 'dark' }));
    await expect(frame.locator('html')).toHaveAttribute('data-theme', 'dark');
    await page.screenshot({ path: testInfo.outputPath('embedded-dark.png') });

    // open_session.
    await page.evaluate((id) => (window as any).send({ bridge: 1, type: 'open_session', session_id: id }), sid2);
    await waitFor(page, (m) => m.type === 'state' && m.session_id === sid2, 'the state of the other session');
    await expect.poll(() => page!.frames().some((f) => f.url().includes(`/s/${sid2}`)), { message: 'the frame shows the other session' }).toBe(true);
    await expect(frame.getByTestId('transcript')).toBeVisible();
    expect(await page.evaluate(() => (window as any).__others.length), 'nobody else posts to the host').toBe(0);

    // A page on an origin the relay does not list: the frame is refused and nothing arrives.
    const other = await ctx.newPage();
    shots.set('stranger', other);
    await other.goto(`${stranger.origin}/host.html`);
    await other.waitForTimeout(3_000);
    await other.evaluate(() => (window as any).send({ bridge: 1, type: 'send', text: 'should never arrive' }));
    await other.waitForTimeout(1_000);
    expect(await got(other), 'the unlisted host receives nothing').toEqual([]);
    const framed = other.frames().find((f) => f !== other.mainFrame());
    const loaded = framed ? await framed.evaluate(() => !!document.querySelector('[data-testid]')).catch(() => false) : false;
    expect(loaded, 'the console did not load in the unlisted host').toBe(false);
    expect(await other.evaluate(() => (document.getElementById('console') as HTMLIFrameElement).contentDocument), 'no access to the frame').toBeNull();

    // A simulated iOS webview: messages arrive as JSON text on webkit.messageHandlers.bridgeConsole.
    const sid3 = await create('flow 20 webview');
    const ios = await ctx.newPage();
    shots.set('webview', ios);
    await ios.addInitScript(() => {
      const w = window as any;
      w.__native = [];
      w.webkit = { messageHandlers: { bridgeConsole: { postMessage: (json: string) => w.__native.push(JSON.parse(json)) } } };
    });
    await ios.goto(`${relay.base}/s/${sid3}?embed=1#login=${token}&theme=light`);
    await expect(ios).not.toHaveURL(/login=/);
    await expect(ios).toHaveURL(/#theme=light$/);
    await expect(ios.locator('html')).toHaveAttribute('data-theme', 'light');
    await expect(ios.getByTestId('connection-status')).toHaveAttribute('data-state', 'live', { timeout: 15_000 });
    const native = (): Promise<Msg[]> => ios.evaluate(() => (window as any).__native as Msg[]);
    await expect.poll(async () => (await native()).some((m) => m.type === 'ready')).toBe(true);
    await ios.evaluate(
      (text) => (window as any).bridgeConsole.receive(JSON.stringify({ bridge: 1, type: 'send', text })),
      `e2e-bash please create a file ${uid}-ios`,
    );
    await expect
      .poll(async () => (await native()).find((m) => m.type === 'needs_you')?.tool_name, { timeout: 45_000 })
      .toBe('Bash');
    expect((await native()).find((m) => m.type === 'needs_you')?.session_id).toBe(sid3);

    // controls=observer: read-only even with the controller's cookie (the Bash prompt waits, no answer buttons).
    const ro = await ctx.newPage();
    await ro.goto(`${relay.base}/?embed=1&session=${sid3}&controls=observer`);
    await expect(ro.getByTestId('observer-banner')).toBeVisible();
    await expect(ro.getByTestId('transcript')).toBeVisible();
    for (const control of ['composer-input', 'composer-send', 'permission-allow', 'session-list']) {
      await expect(ro.getByTestId(control), `read-only: no ${control}`).toHaveCount(0);
    }
    await ro.close();

    // A cross-site host: the SameSite=Strict login cookie never comes back into the frame, so the
    // console keeps the host's token in memory and uses it as a bearer token (API calls and stream).
    const xctx = await browser.newContext({ viewport: { width: 1000, height: 700 } });
    const xs = await xctx.newPage();
    shots.set('cross-site', xs);
    await xs.goto(`${crossSite}/host.html`);
    await waitFor(xs, (m) => m.type === 'ready', 'ready (cross-site)');
    await xs.evaluate((token) => (window as any).send({ bridge: 1, type: 'auth', token }), token);
    await waitFor(xs, (m) => m.type === 'state' && m.session_id === sid && m.connection === 'live', 'a live state (cross-site)');
    expect(await xctx.cookies(relay.base), 'no login cookie in a cross-site frame').toEqual([]);
    await xs.evaluate((text) => (window as any).send({ bridge: 1, type: 'send', text }), `e2e-bash please create a file ${uid}-x`);
    expect((await waitFor(xs, (m) => m.type === 'needs_you', 'needs_you (cross-site)')).tool_name).toBe('Bash');
    await api.dispose();
  } finally {
    await relay?.stop();
    await host?.close();
    await stranger?.close();
  }
});
