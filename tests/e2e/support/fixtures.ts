// Playwright fixtures shared by every flow: the backend a project runs against, a bearer-authenticated
// relay API client for set-up and server-side checks, a per-test working directory, final-state
// screenshots into artifacts/screenshots/, and failure diagnostics (trace location + relay log tail).
import { test as base, expect, type APIRequestContext, type Page, type TestInfo } from '@playwright/test';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fatalPageErrors, pageLogText, resetPageLog, watchPage } from './page-log';
import { readState, type BackendInfo } from './state';

export interface BackendOptions {
  backendName: 'demo' | 'real';
}

const ARTIFACTS = path.resolve(__dirname, '../artifacts');

/** The relay API with the controller token (set-up and server-side assertions; the UI is driven by the page). */
export class RelayApi {
  constructor(
    readonly ctx: APIRequestContext,
    readonly backend: BackendInfo,
  ) {}

  async createSession(body: { cwd?: string; model?: string; permission_mode?: string; title?: string } = {}): Promise<string> {
    const r = await this.ctx.post('/v1/code/sessions', { data: body });
    expect(r.status(), `create session: ${await r.text()}`).toBe(201);
    return (await r.json()).session_id as string;
  }

  async session(id: string): Promise<Record<string, unknown>> {
    const r = await this.ctx.get(`/v1/code/sessions/${id}`);
    expect(r.ok(), await r.text()).toBeTruthy();
    return r.json();
  }

  /** Every durable event of a session (envelopes with payload). */
  async events(id: string): Promise<Array<{ sequence_num: number; source?: string; payload: Record<string, any> }>> {
    const out: Array<{ sequence_num: number; source?: string; payload: Record<string, any> }> = [];
    let after = 0;
    for (let page = 0; page < 100; page++) {
      const r = await this.ctx.get(`/v1/code/sessions/${id}/events?after=${after}&limit=500`);
      expect(r.ok(), await r.text()).toBeTruthy();
      const body = await r.json();
      out.push(...body.events);
      if (body.events.length === 0) break;
      after = body.events[body.events.length - 1].sequence_num;
    }
    return out;
  }

  async observerToken(sessionId: string): Promise<{ id: string; token: string; console_url: string }> {
    const r = await this.ctx.post('/v1/observer-tokens', { data: { session_id: sessionId } });
    expect(r.ok(), await r.text()).toBeTruthy();
    return r.json();
  }

  /** real backend only: what the fake model received. */
  async fakeModelRequests(): Promise<Array<Record<string, any>>> {
    if (!this.backend.fakeModel) throw new Error('no fake model on this backend');
    const r = await this.ctx.get(`${this.backend.fakeModel}/_fake/requests`);
    expect(r.ok()).toBeTruthy();
    return (await r.json()).requests;
  }
}

interface Fixtures {
  backend: BackendInfo;
  api: RelayApi;
  /** A fresh directory under the relay's --cwd for this test's session(s). */
  workDir: string;
  /** A unique token for prompts and file names. */
  uid: string;
  /** Extra pages (other browser contexts) to screenshot at the end, by label; their contexts are closed after. */
  shots: Map<string, Page>;
  _finalShot: void;
  _diagnostics: void;
}

export const test = base.extend<Fixtures & BackendOptions>({
  backendName: ['demo', { option: true }],

  backend: async ({ backendName }, use) => {
    const state = readState();
    const b = state.backends[backendName];
    if (!b || !('base' in b)) {
      const why = (b as { unavailable?: string } | undefined)?.unavailable ?? 'not started';
      console.log(`SKIPPED (${backendName} backend unavailable): ${why}`);
      test.skip(true, `${backendName} backend unavailable: ${why}`);
      return;
    }
    await use(b);
  },

  api: async ({ backend, playwright }, use) => {
    const ctx = await playwright.request.newContext({
      baseURL: backend.base,
      extraHTTPHeaders: { Authorization: `Bearer ${readState().token}` },
    });
    await use(new RelayApi(ctx, backend));
    await ctx.dispose();
  },

  uid: async ({}, use) => {
    await use(randomBytes(4).toString('hex'));
  },

  workDir: async ({ backend, uid }, use, testInfo) => {
    const dir = path.join(backend.workDir, `${slug(testInfo)}-${uid}`);
    fs.mkdirSync(dir, { recursive: true });
    await use(dir);
  },

  shots: async ({}, use) => {
    await use(new Map<string, Page>());
  },

  _finalShot: [
    async ({ page, shots }, use, testInfo) => {
      await use();
      // The final state of each flow, as a CI artefact (also when it failed: that's when it's most useful).
      const dir = path.join(ARTIFACTS, 'screenshots');
      fs.mkdirSync(dir, { recursive: true });
      const name = `${slug(testInfo)}--${testInfo.project.name}`;
      const all: Array<[string, Page]> = [['', page], ...shots.entries()];
      for (const [label, p] of all) {
        if (p.isClosed() || p.url() === 'about:blank') continue;
        const file = path.join(dir, `${name}${label ? `--${label}` : ''}.png`);
        await p.screenshot({ path: file, fullPage: false, timeout: 10_000 }).catch(() => undefined);
      }
      for (const p of shots.values()) await p.context().close().catch(() => undefined);
    },
    { auto: true },
  ],

  _diagnostics: [
    async ({ backend, page }, use, testInfo) => {
      const logStart = fs.existsSync(backend.relayLog) ? fs.statSync(backend.relayLog).size : 0;
      resetPageLog();
      watchPage(page, 'page');
      await use();
      const fatal = fatalPageErrors();
      if (testInfo.status !== testInfo.expectedStatus || fatal.length > 0) {
        await testInfo.attach('browser-console', { body: pageLogText() || '(nothing logged)', contentType: 'text/plain' });
      }
      if (testInfo.status !== testInfo.expectedStatus) {
        const trace = testInfo.outputPath('trace.zip');
        const lines = [
          `--- ${testInfo.titlePath.join(' > ')} [${testInfo.project.name}] failed`,
          `trace: ${trace}`,
          `  view: npx playwright show-trace ${path.relative(process.cwd(), trace)}`,
          `relay log: ${backend.relayLog}`,
          `--- relay log tail (since this test started):`,
          tail(backend.relayLog, logStart, 60),
        ];
        console.log(lines.join('\n'));
        await testInfo.attach('relay-log-tail', { body: tail(backend.relayLog, logStart, 400), contentType: 'text/plain' });
        const logged = pageLogText();
        if (logged) console.log(`--- browser console (errors, warnings, panics):\n${logged.split('\n').slice(-40).join('\n')}`);
      }
      // A panic kills the console's wasm: whatever the assertions saw, the flow is broken.
      expect(fatal, 'a browser page panicked or crashed').toEqual([]);
    },
    { auto: true },
  ],
});

export { expect };

function slug(testInfo: TestInfo): string {
  return testInfo.title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60);
}

function tail(file: string, from: number, maxLines: number): string {
  try {
    const size = fs.statSync(file).size;
    const start = Math.max(from, size - 256 * 1024);
    const fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(size - start);
    fs.readSync(fd, buf, 0, buf.length, start);
    fs.closeSync(fd);
    return buf.toString('utf8').split('\n').slice(-maxLines).join('\n');
  } catch (e) {
    return `(cannot read ${file}: ${(e as Error).message})`;
  }
}
