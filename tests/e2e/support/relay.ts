// A relay started by a flow itself (the shared ones from global-setup are plain HTTP): over HTTPS with a
// self-signed certificate made by the relay (`--tls-self-signed`), with the backend's agent (demo agent,
// or the real CLI against the run's fake model), its own data directory, and extra flags.
import { spawn, type ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readState, type BackendInfo } from './state';
import { untilListening } from './listening';

const E2E_DIR = path.resolve(__dirname, '..');
const REPO = path.resolve(E2E_DIR, '../..');

export interface OwnRelay {
  base: string;
  login: string;
  dataDir: string;
  /** The console build this relay serves. */
  staticDir: string;
  log: string;
  child: ChildProcess;
  /** base64 SHA-256 of the certificate's SubjectPublicKeyInfo (Chromium's --ignore-certificate-errors-spki-list). */
  spki?: string;
  /** The banner the relay printed on stdout (login line withheld). */
  banner: string[];
  stop(): Promise<void>;
  /**
   * Stops the relay and starts it again on the same address, data directory and flags: how a new
   * build reaches a running relay (it serves the console it read at start, never files changed since).
   */
  restart(): Promise<void>;
}

export interface RelayOptions {
  /** Serve HTTPS with --tls-self-signed (default true). */
  tls?: boolean;
  /** Serve a private copy of the console build (the flow may change it, e.g. to ship a "new version"). */
  copyStatic?: boolean;
  /** The relay's --cwd (default: the backend's work directory), e.g. a git repository for --spawn-mode worktree. */
  cwd?: string;
  /** Run the backend's agent (default true); false for a relay that runs none, e.g. a `--role gateway`. */
  agent?: boolean;
}

export async function startRelay(backend: BackendInfo, name: string, extra: string[], opts: RelayOptions = {}): Promise<OwnRelay> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bridge-e2e-${name}-`));
  const dataDir = path.join(dir, 'data');
  const logDir = path.join(E2E_DIR, 'artifacts/logs');
  fs.mkdirSync(logDir, { recursive: true });
  const log = path.join(logDir, `${name}.log`);
  const relay = process.env.BRIDGE_RELAY_BIN ?? path.join(REPO, 'target/debug/bridge-relay');
  let staticDir = process.env.E2E_STATIC_DIR ?? path.join(REPO, 'dist');
  if (opts.copyStatic) {
    const copy = path.join(dir, 'dist');
    fs.cpSync(staticDir, copy, { recursive: true });
    staticDir = copy;
  }
  const agent =
    opts.agent === false
      ? []
      : backend.name === 'real'
        ? ['--claude', backend.claudeBin!, '--permission-mode', 'default']
        : ['--demo', '--demo-scenario', path.join(E2E_DIR, 'scenarios/demo.json')];
  const tls = opts.tls === false ? [] : ['--tls-self-signed', '--tls-name', 'localhost', '--tls-name', '127.0.0.1'];
  const args = [...agent, ...tls, '--bind', '127.0.0.1:0', '--data-dir', dataDir, '--static-dir', staticDir, '--cwd', opts.cwd ?? backend.workDir, ...extra];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    BRIDGE_RELAY_TOKEN: readState().token,
    BRIDGE_PRINT_LOGIN_URL: '1',
    BRIDGE_RELAY_LOG: process.env.BRIDGE_RELAY_LOG ?? 'info',
    BRIDGE_DEMO_SPEED: '1',
    HOME: dir,
    ...(backend.agentEnv ?? {}),
  };
  const out = fs.createWriteStream(log);
  const launch = async (args: string[]): Promise<{ child: ChildProcess; addr: string; lines: string[] }> => {
    out.write(`$ ${relay} ${args.join(' ')}\n`);
    const child = spawn(relay, args, { env, cwd: backend.workDir, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr!.on('data', (c: Buffer) => out.write(c));
    const lines: string[] = [];
    const addr = await untilListening(child, name, out, log, lines, 60_000);
    return { child, addr, lines };
  };
  const first = await launch(args);
  const child = first.child;
  const addr = first.addr;
  const lines = first.lines;
  // The banner carries a single-use code; tests may log in more than once: the token works too.
  const login = readState().token;
  const scheme = tls.length ? 'https' : 'http';
  let spki: string | undefined;
  if (tls.length) {
    const cert = new crypto.X509Certificate(fs.readFileSync(path.join(dataDir, 'tls/cert.pem')));
    const der = cert.publicKey.export({ type: 'spki', format: 'der' });
    spki = crypto.createHash('sha256').update(der).digest('base64');
  }
  const stop = async () => {
    const child = own.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      child.kill('SIGTERM');
    });
  };
  const restart = async () => {
    await stop();
    const at = args.indexOf('--bind');
    const again = [...args.slice(0, at), '--bind', addr, ...args.slice(at + 2)];
    own.child = (await launch(again)).child;
  };
  const own: OwnRelay = {
    base: `${scheme}://${addr}`,
    login,
    dataDir,
    staticDir,
    log,
    child,
    spki,
    banner: lines.filter((l) => !l.includes('#login=')),
    stop,
    restart,
  };
  return own;
}
