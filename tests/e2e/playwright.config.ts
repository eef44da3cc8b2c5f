import { defineConfig, type Project } from '@playwright/test';
import type { BackendOptions } from './support/fixtures';
import { chromiumArgs, chromiumPath } from './support/chromium';

// Which backends to run: "demo" (bridge-relay --demo, the scripted demo agent) and/or "real" (the real
// Claude Code CLI against bridge-fake-model). E2E_BACKENDS=demo,real (default both).
const backends = (process.env.E2E_BACKENDS ?? 'demo,real')
  .split(',')
  .map((s) => s.trim())
  .filter((s): s is 'demo' | 'real' => s === 'demo' || s === 'real');

const forms = {
  desktop: { viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false },
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
} as const;

// Which flow runs where (README.md, "Matrix"): every flow once on demo-desktop; on the real CLI the
// flows whose subject is the CLI's own behaviour (what it runs, denies, remembers, streams, writes);
// on the phone the flows whose subject is layout or touch. `E2E_FULL_MATRIX=1` runs every flow on
// every project (as before the matrix; ~2.5x the time).
const matrix: Record<string, string[] | 'all'> = {
  'demo-desktop': 'all',
  'demo-phone': ['01', '02', '07', '11', '13', '15', '17', '19', '23', '24', '28', '29', '30', '31', '32', '33'],
  'real-desktop': ['00', '02', '03', '04', '05', '06', '09', '12', '13', '15', '16', '18', '22', '25'],
  'real-phone': ['02', '32', '33'],
};
const full = process.env.E2E_FULL_MATRIX === '1';

const projects: Project<BackendOptions>[] = [];
for (const backend of backends) {
  for (const [form, use] of Object.entries(forms)) {
    const name = `${backend}-${form}`;
    const flows = full ? 'all' : matrix[name];
    const testMatch = flows === 'all' ? undefined : new RegExp(`(^|/)(${flows.join('|')})-[^/]*\\.spec\\.ts$`);
    projects.push({ name, use: { ...use, backendName: backend }, ...(testMatch ? { testMatch } : {}) });
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
      executablePath: chromiumPath,
      args: ['--headless', ...chromiumArgs],
    },
  },
  projects,
});
