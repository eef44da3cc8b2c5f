// Starts everything the flows talk to, once per run, on ephemeral loopback ports:
//   demo: bridge-relay --demo --demo-scenario scenarios/demo.json
//   real: bridge-fake-model --scenario scenarios/fake-model.json, and bridge-relay --claude <real CLI>
//         with a temporary HOME and ANTHROPIC_BASE_URL pointing at the fake model.
// Writes the addresses to a state file (E2E_STATE_FILE) that the workers read, and returns the teardown,
// which stops every process it started (by pid) and keeps their logs under artifacts/logs/.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FullConfig } from '@playwright/test';
import type { BackendInfo, E2EState } from './state';
import { untilListening } from './listening';

const E2E_DIR = path.resolve(__dirname, '..');
const REPO = path.resolve(E2E_DIR, '../..');
const ARTIFACTS = path.join(E2E_DIR, 'artifacts');
const LOGS = path.join(ARTIFACTS, 'logs');

interface Started {
  name: string;
  child: ChildProcess;
  log: string;
}

const started: Started[] = [];

function bin(envName: string, rel: string): string {
  const p = process.env[envName] ?? path.join(REPO, rel);
  if (!fs.existsSync(p)) {
    throw new Error(`${p} does not exist: build it first (cargo build -p ${path.basename(rel)}) or set ${envName}`);
  }
  return p;
}

/** Spawn `cmd`, tee its stdout+stderr into a log file, resolve with the address from `listening on ADDR`. */
function startProcess(
  name: string,
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ addr: string; lines: string[]; log: string }> {
  const log = path.join(LOGS, `${name}.log`);
  const out = fs.createWriteStream(log);
  out.write(`$ ${cmd} ${args.join(' ')}\n`);
  const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push({ name, child, log });
  child.stderr!.on('data', (chunk: Buffer) => out.write(chunk));
  child.on('exit', (code, signal) => out.write(`\n[exited code=${code} signal=${signal}]\n`));
  const lines: string[] = [];
  return untilListening(child, name, out, log, lines, 30_000).then((addr) => ({ addr, lines, log }));
}

function resolveClaude(): { bin?: string; version?: string; reason?: string } {
  let bin = process.env.CLAUDE_BIN;
  if (!bin) {
    if (process.env.E2E_INSTALL_CLAUDE === '0') {
      const cache = process.env.BRIDGE_CACHE ?? path.join(os.homedir(), '.cache/bridge-console');
      const p = path.join(cache, 'claude/2.1.332/package/claude');
      if (!fs.existsSync(p)) return { reason: `no real CLI at ${p} (E2E_INSTALL_CLAUDE=0)` };
      bin = p;
    } else {
      try {
        const out = execFileSync('bash', [path.join(REPO, 'scripts/install-claude.sh')], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
          timeout: 15 * 60_000,
        });
        bin = out.trim().split('\n').pop();
      } catch (e) {
        return { reason: `scripts/install-claude.sh failed: ${(e as Error).message}` };
      }
    }
  }
  if (!bin || !fs.existsSync(bin)) return { reason: `real CLI binary not found (${bin})` };
  let version = 'unknown';
  try {
    version = execFileSync(bin, ['--version'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: os.tmpdir(), DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1' },
      timeout: 30_000,
    }).trim();
  } catch {
    /* keep unknown */
  }
  return { bin, version };
}

/** The banner's login link carries a single-use code, never the permanent token. */
function assertNoTokenInBanner(lines: string[], token: string): void {
  if (lines.some((l) => l.includes(token))) throw new Error('the relay printed its controller token');
}

export default async function globalSetup(config: FullConfig): Promise<() => Promise<void>> {
  fs.mkdirSync(LOGS, { recursive: true });
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-e2e-'));
  const token = randomBytes(24).toString('hex');
  const staticDir = process.env.E2E_STATIC_DIR ?? path.join(REPO, 'dist');
  if (!fs.existsSync(path.join(staticDir, 'index.html'))) {
    throw new Error(`${staticDir}/index.html missing: build the console first (trunk build) or set E2E_STATIC_DIR`);
  }
  const relay = bin('BRIDGE_RELAY_BIN', 'target/debug/bridge-relay');
  const wanted = new Set(config.projects.map((p) => (p.use as { backendName?: string }).backendName ?? 'demo'));
  const state: E2EState = { runDir, token, backends: {} };
  const baseEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    BRIDGE_RELAY_TOKEN: token,
    BRIDGE_PRINT_LOGIN_URL: '1',
    BRIDGE_RELAY_LOG: process.env.BRIDGE_RELAY_LOG ?? 'info',
  };
  /** What every backend's relay starts with: a free port, its data under `dir`, this console, sessions in `work`. */
  const relayArgs = (dir: string, work: string): string[] => [
    '--bind',
    '127.0.0.1:0',
    '--data-dir',
    path.join(dir, 'data'),
    '--static-dir',
    staticDir,
    '--cwd',
    work,
    // Every flow x form opens its own sessions on this one relay (default cap: 32 live).
    '--max-sessions',
    '500',
  ];

  const jobs: Promise<void>[] = [];
  if (wanted.has('demo')) {
    jobs.push(
      (async () => {
        const dir = path.join(runDir, 'demo');
        const work = path.join(dir, 'work');
        fs.mkdirSync(work, { recursive: true });
        const r = await startProcess(
          'relay-demo',
          relay,
          [
            '--demo',
            '--demo-scenario',
            path.join(E2E_DIR, 'scenarios/demo.json'),
            ...relayArgs(dir, work),
            // Claude Code's own sessions are listed from here: an empty dir, never the developer's ~/.claude.
            '--claude-config-dir',
            path.join(dir, 'claude-config'),
          ],
          { ...baseEnv, HOME: dir, BRIDGE_DEMO_SPEED: '1' },
          work,
        );
        const info: BackendInfo = {
          name: 'demo',
          base: `http://${r.addr}`,
          // The banner's code is single-use; flows open `#login=` many times: the token is accepted too.
          login: (assertNoTokenInBanner(r.lines, token), token),
          workDir: work,
          relayLog: r.log,
          agentVersion: 'bridge-demo-agent',
        };
        state.backends.demo = info;
      })(),
    );
  }
  if (wanted.has('real')) {
    jobs.push(
      (async () => {
        const claude = resolveClaude();
        if (!claude.bin) {
          if (process.env.E2E_REQUIRE_REAL === '1') throw new Error(`real backend required: ${claude.reason}`);
          state.backends.real = { unavailable: claude.reason };
          console.warn(`[e2e] real-CLI projects will be skipped: ${claude.reason}`);
          return;
        }
        const dir = path.join(runDir, 'real');
        const work = path.join(dir, 'work');
        const home = path.join(dir, 'home');
        fs.mkdirSync(work, { recursive: true });
        fs.mkdirSync(home, { recursive: true });
        const fake = await startProcess(
          'fake-model',
          bin('BRIDGE_FAKE_MODEL_BIN', 'target/debug/bridge-fake-model'),
          [
            '--bind',
            '127.0.0.1:0',
            '--scenario',
            path.join(E2E_DIR, 'scenarios/fake-model.json'),
            '--record',
            path.join(LOGS, 'fake-model-requests.jsonl'),
          ],
          { PATH: process.env.PATH, FAKE_MODEL_LOG: 'info' },
          dir,
        );
        const agentEnv = {
          HOME: home,
          ANTHROPIC_BASE_URL: `http://${fake.addr}`,
          ANTHROPIC_API_KEY: 'sk-ant-fake',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_AUTOUPDATER: '1',
        };
        const r = await startProcess(
          'relay-real',
          relay,
          [
            '--claude',
            claude.bin,
            ...relayArgs(dir, work),
            // Explicit, so every CLI version prompts the same way (2.1.300 defaulted to `auto`).
            '--permission-mode',
            'default',
            // The CLI's own sessions are listed from the HOME it runs with (not the developer's ~/.claude).
            '--claude-config-dir',
            path.join(home, '.claude'),
            // Passed on to every `claude`: an MCP server whose tool asks through MCP elicitation, so
            // the console's elicitation dialog meets the real CLI (flow 15).
            '--',
            '--mcp-config',
            JSON.stringify({
              mcpServers: {
                asker: {
                  command: process.execPath,
                  args: [path.join(E2E_DIR, 'support/mcp-asker.mjs')],
                  env: { MCP_ASKER_LOG: path.join(LOGS, 'mcp-asker.log') },
                },
              },
            }),
          ],
          { ...baseEnv, ...agentEnv },
          work,
        );
        state.backends.real = {
          name: 'real',
          base: `http://${r.addr}`,
          // The banner's code is single-use; flows open `#login=` many times: the token is accepted too.
          login: (assertNoTokenInBanner(r.lines, token), token),
          workDir: work,
          relayLog: r.log,
          fakeModel: `http://${fake.addr}`,
          agentVersion: claude.version,
          claudeBin: claude.bin,
          agentEnv,
        };
        console.log(`[e2e] real backend: Claude Code ${claude.version} (${claude.bin}), fake model ${fake.addr}`);
      })(),
    );
  }
  try {
    await Promise.all(jobs);
  } catch (e) {
    await teardown();
    throw e;
  }
  const stateFile = path.join(runDir, 'state.json');
  fs.writeFileSync(stateFile, JSON.stringify(state, null, 2), { mode: 0o600 });
  process.env.E2E_STATE_FILE = stateFile;
  for (const [name, b] of Object.entries(state.backends)) {
    if (b && 'base' in b) console.log(`[e2e] ${name}: relay ${b.base}, log ${path.relative(process.cwd(), b.relayLog)}`);
  }

  async function teardown(): Promise<void> {
    await Promise.all(started.map((s) => stop(s)));
    if (process.env.E2E_KEEP !== '1') fs.rmSync(runDir, { recursive: true, force: true });
  }
  process.once('exit', () => {
    for (const s of started) if (s.child.exitCode === null && s.child.pid) s.child.kill('SIGKILL');
  });
  return teardown;
}

async function stop(s: Started): Promise<void> {
  const { child } = s;
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(() => {
      child.kill('SIGKILL');
    }, 5_000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
