// A NATS server with JetStream started by a flow itself (scale-out, issue 14): `nats-server` from PATH
// (or /usr/sbin, or NATS_SERVER_BIN) on a free loopback port with a temporary store directory. Missing,
// the flow fails and says how to install it (CI: scripts/setup.sh --test); it is never skipped.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

export interface OwnNats {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
  /** Kills the server and keeps its store: a NATS outage. */
  pause(): Promise<void>;
  /** Starts it again on the same port with the same store. */
  resume(): Promise<void>;
}

function natsBinary(): string {
  const env = process.env.NATS_SERVER_BIN;
  if (env && fs.existsSync(env)) return env;
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const d of dirs) {
    const p = path.join(d, 'nats-server');
    if (!env && d && fs.existsSync(p)) return p;
  }
  throw new Error(
    'nats-server (with JetStream) is not installed: this flow runs the console against a scale-out gateway and needs it. ' +
      'Install it with `scripts/setup.sh --test` (Debian\'s nats-server), or point NATS_SERVER_BIN at one' +
      (env ? ` (NATS_SERVER_BIN=${env} does not exist)` : ''),
  );
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export async function startNats(name: string): Promise<OwnNats> {
  const bin = natsBinary();
  const store = fs.mkdtempSync(path.join(os.tmpdir(), `bridge-e2e-${name}-nats-`));
  const port = await freePort();
  const launch = async (): Promise<ChildProcess> => {
    const child = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], { stdio: 'ignore' });
    let exited: string | undefined;
    child.once('exit', (code, signal) => (exited = `code ${code}, signal ${signal}`));
    child.once('error', (e) => (exited = String(e)));
    const deadline = Date.now() + 10_000;
    while (!(await listening(port))) {
      if (exited) throw new Error(`${bin} exited at start (${exited})`);
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${bin} did not listen on 127.0.0.1:${port} within 10 s`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return child;
  };
  const kill = async (child: ChildProcess, signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill(signal);
      });
    }
  };
  const own: OwnNats = {
    url: `nats://127.0.0.1:${port}`,
    child: await launch(),
    stop: async () => {
      await kill(own.child, 'SIGTERM');
      fs.rmSync(store, { recursive: true, force: true });
    },
    pause: async () => kill(own.child, 'SIGKILL'),
    resume: async () => {
      own.child = await launch();
    },
  };
  return own;
}
