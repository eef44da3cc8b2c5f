import { defineConfig, type Project } from '@playwright/test';
import type { BackendOptions } from './support/fixtures';

// Which backends to run: "demo" (bridge-relay --demo, the scripted demo agent) and/or "real" (the real
// Claude Code CLI against bridge-fake-model). E2E_BACKENDS=demo,real (default both).
const backends = (process.env.E2E_BACKENDS ?? 'demo,real')
  .split(',')
  .map((s) => s.trim())
  .filter((s): s is 'demo' | 'real' => s === 'demo' || s === 'real');

const chromium = process.env.E2E_CHROMIUM ?? '/usr/bin/chromium';

const forms = {
  desktop: { viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false },
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
} as const;

const projects: Project<BackendOptions>[] = [];
for (const backend of backends) {
  for (const [form, use] of Object.entries(forms)) {
    projects.push({ name: `${backend}-${form}`, use: { ...use, backendName: backend } });
  }
}

export default defineConfig<BackendOptions>({
  testDir: './flows',
  outputDir: './test-results',
  globalSetup: './support/global-setup.ts',
  fullyParallel: true,
  workers: Number(process.env.E2E_WORKERS ?? 2),
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  forbidOnly: !!process.env.CI,
  reporter: [['list'], ['junit', { outputFile: 'artifacts/junit.xml' }]],
  use: {
    browserName: 'chromium',
    headless: true,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    actionTimeout: 15_000,
    launchOptions: {
      executablePath: chromium,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  projects,
});
