// What global-setup started, as read by the workers (E2E_STATE_FILE).
import * as fs from 'node:fs';

export interface BackendInfo {
  name: 'demo' | 'real';
  /** http://127.0.0.1:PORT of the relay. */
  base: string;
  /** The `#login=` fragment value tests use: the controller token (the banner's code is single-use). */
  login: string;
  /** The relay's --cwd; flows create per-test directories below it. */
  workDir: string;
  relayLog: string;
  /** real only: http://127.0.0.1:PORT of bridge-fake-model. */
  fakeModel?: string;
  agentVersion?: string;
  /** real only: the Claude Code binary and the environment the relay runs it with (flows that start
   * their own relay, e.g. over HTTPS, reuse them). */
  claudeBin?: string;
  agentEnv?: Record<string, string>;
}

export interface E2EState {
  runDir: string;
  /** BRIDGE_RELAY_TOKEN given to every relay. */
  token: string;
  backends: { demo?: BackendInfo | { unavailable?: string }; real?: BackendInfo | { unavailable?: string } };
}

export function readState(): E2EState {
  const file = process.env.E2E_STATE_FILE;
  if (!file || !fs.existsSync(file)) throw new Error('E2E_STATE_FILE missing: run through playwright test (global setup)');
  return JSON.parse(fs.readFileSync(file, 'utf8')) as E2EState;
}
