#!/usr/bin/env node
// SDK compatibility check: the unmodified official browser SDK
// (`@anthropic-ai/claude-agent-sdk/browser`, pinned in package.json) completes a turn with a permission
// prompt against `bridge-relay --demo`, over the `sse` transport and then the `websocket` transport.
//
//   BRIDGE_RELAY_BIN   relay binary (default: ../../target/debug/bridge-relay relative to this file)
//   SDK_COMPAT_TIMEOUT_MS  per-phase time bound (default 30000)
//   SDK_COMPAT_ONLY    "sse" or "ws" to run one transport only
//   SDK_COMPAT_VERBOSE=1  print every message the SDK yields
//   SDK_COMPAT_BASE_URL  run against this already running relay (e.g. a scale-out gateway; cluster.sh)
//                        instead of starting one; SDK_COMPAT_TOKEN is its controller token. The
//                        extended checks need relays of their own and are skipped.
//   SDK_COMPAT_EXTENDED=0 skip the checks that an agent crash and a relay permission timeout reach the
//                         SDK consumer (on by default; two more relays: BRIDGE_DEMO_SCENARIO=crash,
//                         --permission-timeout-secs 1)
//
// Browser globals: the browser entry point needs fetch, ReadableStream, TextDecoder, AbortController,
// crypto.randomUUID (all built into Node 20) and, for the websocket transport, globalThis.WebSocket,
// which Node 20 only exposes behind --experimental-websocket: if it is missing, this script re-runs
// itself with that flag. No other polyfill is used.

import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------- WebSocket global (Node 20)
if (typeof globalThis.WebSocket !== 'function' && !process.env.SDK_COMPAT_REEXEC) {
  const child = spawn(process.execPath, ['--experimental-websocket', ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, SDK_COMPAT_REEXEC: '1' },
  });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  await new Promise(() => {});
}

const { query, getSseDropCounts, getCcrEvent, getSseLastSequenceNum, G4_TEXT_ENVELOPE_ARM_PORTED } = await import(
  '@anthropic-ai/claude-agent-sdk/browser'
);
const sdkVersion = JSON.parse(
  readFileSync(join(here, 'node_modules/@anthropic-ai/claude-agent-sdk/package.json'), 'utf8'),
);

// Every GET of an SSE stream URL the SDK makes (to see how it reconnects), recorded by wrapping the
// global fetch the SDK calls. Requests and responses pass through unchanged.
const streamGets = [];
{
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : (input?.url ?? String(input));
    const method = String(init?.method ?? input?.method ?? 'GET').toUpperCase();
    const watched = method === 'GET' && url.includes('/events/stream');
    const rec = watched ? { url, at: Date.now(), lastEventId: init?.headers?.['Last-Event-ID'] ?? null, status: null } : null;
    if (rec) streamGets.push(rec);
    const r = await realFetch(input, init);
    if (rec) rec.status = r.status;
    return r;
  };
}

// Every WebSocket the SDK opens (a reconnect re-sends the prompts still pending), with how it closed.
const wsOpens = [];
if (typeof globalThis.WebSocket === 'function') {
  const RealWebSocket = globalThis.WebSocket;
  globalThis.WebSocket = class extends RealWebSocket {
    constructor(url, ...rest) {
      super(url, ...rest);
      const rec = { url: String(url), at: Date.now(), close: null };
      wsOpens.push(rec);
      if (process.env.SDK_COMPAT_VERBOSE === '1') {
        this.addEventListener('message', (e) => {
          for (const l of String(e.data).split('\n')) if (l && !l.includes('"stream_event"')) console.log(`ws< ${l.slice(0, 160)}`);
        });
      }
      this.addEventListener('close', (e) => {
        rec.close = `${e.code} ${e.reason}`;
      });
    }
  };
}

const PHASE_MS = Number(process.env.SDK_COMPAT_TIMEOUT_MS || 30000);
const VERBOSE = process.env.SDK_COMPAT_VERBOSE === '1';
const ONLY = process.env.SDK_COMPAT_ONLY || '';
const BASE_URL = (process.env.SDK_COMPAT_BASE_URL || '').replace(/\/+$/, '');
const EXTENDED = process.env.SDK_COMPAT_EXTENDED !== '0' && !BASE_URL;
const RELAY_BIN = process.env.BRIDGE_RELAY_BIN
  ? resolve(process.env.BRIDGE_RELAY_BIN)
  : resolve(here, '../../target/debug/bridge-relay');
const TOKEN = BASE_URL ? process.env.SDK_COMPAT_TOKEN || '' : `sdkc_${randomBytes(24).toString('hex')}`;
if (BASE_URL && TOKEN.length < 24) {
  console.error('sdk-compat: SDK_COMPAT_BASE_URL needs SDK_COMPAT_TOKEN (the relay\'s controller token)');
  process.exit(1);
}

class Failure extends Error {}
const fail = (msg) => {
  throw new Failure(msg);
};
const check = (cond, msg) => {
  if (!cond) fail(msg);
};
const redact = (s) => String(s).split(TOKEN).join('<token>');
const short = (v, n = 400) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return redact(s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s);
};
const log = (...a) => console.log(...a.map((x) => redact(x)));

function withTimeout(promise, ms, what) {
  let t;
  return Promise.race([
    promise.finally(() => clearTimeout(t)),
    new Promise((_, rej) => {
      t = setTimeout(() => rej(new Failure(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]);
}

// ---------------------------------------------------------------- the relay process
const relays = new Set();

class Relay {
  constructor(name, extraEnv = {}, extraArgs = []) {
    this.name = name;
    this.extraEnv = extraEnv;
    this.extraArgs = extraArgs;
    this.out = [];
    this.err = [];
    this.proc = null;
    this.exited = null;
    this.dataDir = null;
    this.base = null;
  }

  tail() {
    const t = (lines) => redact(lines.join('').split('\n').slice(-40).join('\n'));
    return `--- relay ${this.name}: stdout (tail) ---\n${t(this.out)}\n--- relay ${this.name}: stderr (tail) ---\n${t(this.err)}`;
  }

  running() {
    return this.proc && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  async start() {
    relays.add(this);
    this.dataDir = mkdtempSync(join(tmpdir(), 'sdk-compat-'));
    const args = ['--demo', '--bind', '127.0.0.1:0', '--data-dir', this.dataDir, '--cwd', this.dataDir, ...this.extraArgs];
    const proc = spawn(RELAY_BIN, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        BRIDGE_RELAY_TOKEN: TOKEN,
        BRIDGE_DEMO_SPEED: process.env.BRIDGE_DEMO_SPEED ?? '0',
        BRIDGE_RELAY_LOG: process.env.BRIDGE_RELAY_LOG ?? 'info',
        ...this.extraEnv,
      },
    });
    this.proc = proc;
    this.exited = new Promise((res) => proc.once('exit', (code, signal) => res({ code, signal })));
    proc.stderr.setEncoding('utf8').on('data', (d) => {
      this.err.push(d);
      if (this.err.length > 2000) this.err.splice(0, 1000);
    });
    proc.stdout.setEncoding('utf8');
    const addr = await withTimeout(
      new Promise((res, rej) => {
        let buf = '';
        proc.once('error', (e) => rej(new Failure(`cannot start ${RELAY_BIN}: ${e.message} (build it: cargo build -p bridge-relay)`)));
        proc.once('exit', (code, signal) => rej(new Failure(`relay exited before listening (code ${code}, signal ${signal})`)));
        proc.stdout.on('data', (d) => {
          this.out.push(d);
          buf += d;
          const m = /^listening on (\S+)$/m.exec(buf);
          if (m) res(m[1]);
        });
      }),
      PHASE_MS,
      'relay to print "listening on ADDR"',
    );
    this.base = `http://${addr}`;
    return this.base;
  }

  async stop() {
    if (this.running()) {
      this.proc.kill('SIGTERM');
      const t = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
      await this.exited;
      clearTimeout(t);
    }
    this.cleanupSync();
  }

  cleanupSync() {
    if (this.running()) this.proc.kill('SIGKILL');
    if (this.dataDir) rmSync(this.dataDir, { recursive: true, force: true });
    this.dataDir = null;
    relays.delete(this);
  }
}

const stopAll = () => Promise.all([...relays].map((r) => r.stop().catch(() => r.cleanupSync())));
const tails = () => [...relays].map((r) => r.tail()).join('\n');
process.on('exit', () => {
  for (const r of [...relays]) r.cleanupSync();
});
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    console.error(`sdk-compat: ${sig}, stopping the relay`);
    stopAll().finally(() => process.exit(1));
  });
}

// ---------------------------------------------------------------- relay REST helpers
async function api(base, method, path, body) {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(PHASE_MS),
  });
  const text = await r.text();
  let json;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: r.status, json, text };
}

async function createSession(base, title) {
  let r = await api(base, 'POST', '/v1/code/sessions', { title });
  // A scale-out gateway answers 503 until it has seen an agents node's heartbeat.
  for (const until = Date.now() + PHASE_MS; r.status === 503 && Date.now() < until; ) {
    await new Promise((res) => setTimeout(res, 200));
    r = await api(base, 'POST', '/v1/code/sessions', { title });
  }
  check(
    r.status >= 200 && r.status < 300 && r.json?.session_id && r.json?.stream_url && r.json?.send_url,
    `POST /v1/code/sessions → HTTP ${r.status} ${short(r.text)} (want 2xx with session_id, stream_url, send_url)`,
  );
  return r.json;
}

// ---------------------------------------------------------------- one SDK turn
const userMessage = (text) => ({
  type: 'user',
  message: { role: 'user', content: text },
  parent_tool_use_id: null,
  session_id: '',
});

const toolResultText = (block) =>
  typeof block.content === 'string'
    ? block.content
    : Array.isArray(block.content)
      ? block.content.map((c) => (typeof c?.text === 'string' ? c.text : '')).join('\n')
      : '';

/**
 * Runs one turn: sends `promptText`, answers the Bash prompt with an edited command, waits for `result`.
 * `transport` is the `sse` or `websocket` option object. Returns what was seen.
 */
async function runTurn(label, transport, promptText) {
  const nonce = randomBytes(6).toString('hex');
  const editedCommand = `echo sdk-compat-${nonce}`;
  const seen = { messages: [], prompts: [], toolResults: [], results: [], seqs: [], streamEvents: 0, editedCommand, nonce };
  const abort = new AbortController();
  let endPrompt;
  const promptDone = new Promise((res) => {
    endPrompt = res;
  });
  async function* prompt() {
    yield userMessage(promptText);
    await promptDone; // keep the input open until the turn is over
  }
  const canUseTool = async (toolName, input, opts) => {
    seen.prompts.push({ toolName, input, opts: { toolUseID: opts?.toolUseID, requestId: opts?.requestId } });
    if (VERBOSE) log(`[${label}] canUseTool(${toolName}, ${short(input)}, toolUseID=${opts?.toolUseID})`);
    return { behavior: 'allow', updatedInput: { ...input, command: editedCommand } };
  };
  const q = query({ prompt: prompt(), abortController: abort, canUseTool, ...transport });

  const consume = (async () => {
    for await (const m of q) {
      seen.messages.push(m);
      const env = transport.sse ? getCcrEvent(q, m) : undefined;
      if (env) seen.seqs.push(env.sequence_num);
      if (VERBOSE) {
        const tag = m.type === 'system' ? `system:${m.subtype}` : m.type === 'result' ? `result:${m.subtype}` : m.type;
        log(`[${label}] YIELD ${tag}${env ? ` seq ${env.sequence_num ?? env.sequenceNum ?? '?'} src ${env.source}` : ''} ${m.type === 'stream_event' ? '' : short(m, 200)}`);
      }
      if (m.type === 'stream_event') seen.streamEvents += 1;
      if (m.type === 'user' && Array.isArray(m.message?.content)) {
        for (const b of m.message.content) {
          if (b?.type === 'tool_result') seen.toolResults.push({ block: b, env, tool_use_result: m.tool_use_result });
        }
      }
      if (m.type === 'result') {
        seen.results.push({ m, env });
        break;
      }
    }
  })();
  try {
    await withTimeout(consume, PHASE_MS, `[${label}] the SDK to yield a \`result\` message`);
  } catch (e) {
    abort.abort();
    const kinds = seen.messages.map((m) => (m.type === 'system' ? `system:${m.subtype}` : m.type));
    let extra = `\n  prompts seen: ${seen.prompts.length}; yielded so far: ${short(kinds.join(', '), 2000)}`;
    if (transport.sse) extra += `\n  SSE drop counts: ${short(getSseDropCounts(q) ?? {})}`;
    if (e instanceof Failure) fail(`${e.message}${extra}`);
    fail(`[${label}] the SDK's query threw: ${e?.name}: ${e?.message}${e?.code ? ` (code ${e.code}, reason ${e.reason})` : ''}${extra}`);
  } finally {
    endPrompt();
  }
  // The SDK's own `initialize` control_request was answered by the agent (through the relay).
  try {
    seen.init = await withTimeout(q.initializationResult(), PHASE_MS, `[${label}] initializationResult()`);
  } catch (e) {
    abort.abort();
    fail(`[${label}] the SDK's initialize was not answered: ${e?.message ?? e}`);
  }
  if (transport.sse) {
    seen.dropCounts = { ...(getSseDropCounts(q) ?? {}) };
    seen.lastSeq = getSseLastSequenceNum(q);
  }
  abort.abort();
  try {
    q.close?.();
  } catch {
    /* already closed */
  }
  return seen;
}

function assertTurn(label, seen, promptText) {
  check(
    seen.init && Array.isArray(seen.init.commands) && Array.isArray(seen.init.models),
    `[${label}] initializationResult() lacks commands/models: ${short(seen.init)}`,
  );
  // 1. the permission prompt arrived, exactly once, for the demo's Bash call
  check(
    seen.prompts.length === 1,
    `[${label}] want exactly 1 canUseTool call, got ${seen.prompts.length}: ${short(seen.prompts)}; WebSockets opened: ${short(wsOpens)}`,
  );
  const p = seen.prompts[0];
  check(p.toolName === 'Bash', `[${label}] canUseTool tool name: want Bash, got ${short(p.toolName)}`);
  check(typeof p.input?.command === 'string' && p.input.command !== seen.editedCommand, `[${label}] canUseTool input has no original command: ${short(p.input)}`);
  check(typeof p.opts.toolUseID === 'string' && p.opts.toolUseID, `[${label}] canUseTool opts.toolUseID missing`);

  // 2. the tool_result shows the edited command (and its simulated output), not the original one
  const tr = seen.toolResults.filter((t) => t.block.tool_use_id === p.opts.toolUseID);
  check(tr.length === 1, `[${label}] want 1 tool_result for ${p.opts.toolUseID}, got ${tr.length} (all: ${short(seen.toolResults.map((t) => t.block))})`);
  const text = toolResultText(tr[0].block);
  check(
    text.includes(seen.editedCommand) && text.includes(`sdk-compat-${seen.nonce}`) && !text.includes(p.input.command),
    `[${label}] tool_result does not show the edited command ${short(seen.editedCommand)} (original ${short(p.input.command)}): ${short(text)}`,
  );
  check(tr[0].block.is_error !== true, `[${label}] tool_result is an error: ${short(tr[0].block)}`);

  // 3. a result completes the turn, after the tool_result
  check(seen.results.length === 1, `[${label}] no result message`);
  const r = seen.results[0].m;
  check(r.subtype === 'success' && r.is_error !== true, `[${label}] result is not a success: ${short(r)}`);
  const iTool = seen.messages.indexOf(seen.messages.find((m) => m.type === 'user' && m.message?.content?.some?.((b) => b?.type === 'tool_result')));
  check(iTool >= 0 && iTool < seen.messages.indexOf(r), `[${label}] result came before the tool_result`);
  const assistants = seen.messages.filter((m) => m.type === 'assistant');
  check(
    assistants.some((m) => m.message?.content?.some?.((b) => b?.type === 'tool_use' && b.id === p.opts.toolUseID)),
    `[${label}] no assistant message with the Bash tool_use ${p.opts.toolUseID}`,
  );
  check(
    assistants.some((m) => m.message?.content?.some?.((b) => b?.type === 'text' && b.text.includes(`sdk-compat-${seen.nonce}`))),
    `[${label}] the final assistant text does not quote the edited command's output`,
  );
  check(seen.streamEvents > 0, `[${label}] no stream_event (partial message) was yielded`);
  check(seen.messages.some((m) => m.type === 'system' && m.subtype === 'init'), `[${label}] no system:init was yielded`);
  // the prompt itself came back (SSE: the relay's client echo; websocket: the CLI's --replay-user-messages)
  check(
    seen.messages.some((m) => m.type === 'user' && (m.message?.content === promptText || m.message?.content?.some?.((b) => b?.text === promptText))),
    `[${label}] the user's own prompt was never yielded back`,
  );
}

async function assertRelaySide(base, sessionId, seen, label) {
  // The relay's REST log must hold the SDK's answer (source client) with the edited input, and the
  // worker's tool_result. This shows the answer went through the relay rather than being synthesised.
  const r = await api(base, 'GET', `/v1/code/sessions/${sessionId}/events?after=0&limit=10000`);
  check(r.status === 200 && Array.isArray(r.json?.events), `[${label}] GET events → HTTP ${r.status} ${short(r.text)}`);
  const evs = r.json.events;
  if (VERBOSE) {
    for (const e of evs) {
      const pl = e.payload ?? {};
      const sub = pl.subtype ?? pl.request?.subtype ?? pl.response?.subtype ?? '';
      log(`[${label}] relay log #${e.sequence_num} ${e.source} ${pl.type}${sub ? `/${sub}` : ''} ${pl.request_id ?? pl.response?.request_id ?? ''}`);
    }
  }
  const answer = evs.find(
    (e) => e.payload?.type === 'control_response' && e.payload?.response?.response?.updatedInput?.command === seen.editedCommand,
  );
  check(answer, `[${label}] the relay's event log has no control_response with the edited command`);
  check(answer.source === 'client', `[${label}] the SDK's control_response is stored with source ${short(answer.source)}, want client`);
  const seqs = evs.map((e) => e.sequence_num);
  check(
    seqs.every((s, i) => i === 0 || s === seqs[i - 1] + 1),
    `[${label}] relay sequence numbers are not dense: ${short(seqs)}`,
  );
  const s = await api(base, 'GET', `/v1/code/sessions/${sessionId}`);
  check(s.status === 200, `[${label}] GET session → HTTP ${s.status} ${short(s.text)}`);
  return { events: evs.length, state: s.json?.state, pending: s.json?.pending_permissions };
}

// ---------------------------------------------------------------- phases
async function phaseSse(base) {
  const label = 'sse';
  const s = await createSession(base, 'sdk-compat sse');
  const promptText = `sdk-compat over SSE ${randomUUID()}`;
  const seen = await runTurn(
    label,
    sseTransport(s, { headers: { 'anthropic-client-platform': 'sdk-compat-test' } }),
    promptText,
  );
  assertTurn(label, seen, promptText);
  // SSE specifics: every CLI message carried source "worker" (otherwise the SDK drops it); nothing
  // dropped for a reason that means the relay spoke the wire wrongly.
  const bad = Object.entries(seen.dropCounts).filter(
    ([k, n]) => n > 0 && !['expected_echo'].includes(k),
  );
  check(bad.length === 0, `[${label}] the SDK dropped frames: ${short(seen.dropCounts)}`);
  const rEnv = seen.results[0].env;
  check(rEnv && rEnv.source === 'worker' && typeof rEnv.event_id === 'string', `[${label}] result envelope: ${short(rEnv)}`);
  const trEnv = seen.toolResults[0].env;
  check(trEnv && trEnv.source === 'worker', `[${label}] tool_result envelope: ${short(trEnv)}`);
  check(seen.lastSeq > 0, `[${label}] getSseLastSequenceNum = ${seen.lastSeq}`);
  const relaySide = await assertRelaySide(base, s.session_id, seen, label);

  // A replacement query() on the same session (what a page reload does), resuming from the delivered
  // cursor: nothing at or below it may be yielded again, and a second turn completes.
  const label2 = 'sse-resume';
  const cursor = seen.lastSeq;
  const prompt2 = `sdk-compat SSE resume ${randomUUID()}`;
  const seen2 = await runTurn(label2, sseTransport(s, { fromSequenceNum: cursor }), prompt2);
  assertTurn(label2, seen2, prompt2);
  check(
    seen2.seqs.length > 0 && seen2.seqs.every((n) => n > cursor),
    `[${label2}] resumed from ${cursor} but the SDK yielded durable events with sequence_num ${short(seen2.seqs.filter((n) => n <= cursor))}`,
  );
  check(
    !seen2.messages.some((m) => m.type === 'user' && m.message?.content === promptText),
    `[${label2}] the first turn's prompt was yielded again after resuming`,
  );
  check(
    new Set(seen2.seqs).size === seen2.seqs.length,
    `[${label2}] a durable event was yielded twice: ${short(seen2.seqs)}`,
  );
  const bad2 = Object.entries(seen2.dropCounts).filter(([k, n]) => n > 0 && k !== 'expected_echo');
  check(bad2.length === 0, `[${label2}] the SDK dropped frames: ${short(seen2.dropCounts)}`);
  return {
    session: s.session_id,
    messages: seen.messages.length,
    streamEvents: seen.streamEvents,
    lastSeq: seen.lastSeq,
    dropCounts: seen.dropCounts,
    ...relaySide,
    resumedFrom: cursor,
    resumedFirstSeq: Math.min(...seen2.seqs),
    resumedLastSeq: seen2.lastSeq,
  };
}

async function phaseWs(base) {
  const label = 'websocket';
  const s = await createSession(base, 'sdk-compat websocket');
  check(typeof s.ws_url === 'string' && /^wss?:/.test(s.ws_url), `[${label}] POST /v1/code/sessions gave no ws_url: ${short(s)}`);
  const promptText = `sdk-compat over WebSocket ${randomUUID()}`;
  // `headers` is never sent by the SDK's websocket transport (CCR-WIRE §6): pass it anyway to prove it is
  // not needed; the credential goes in authMessage (the first frame).
  const seen = await runTurn(
    label,
    {
      websocket: {
        url: s.ws_url,
        headers: { Authorization: `Bearer ${TOKEN}` },
        authMessage: { type: 'auth', credential: { type: 'oauth', token: TOKEN } },
      },
    },
    promptText,
  );
  assertTurn(label, seen, promptText);
  const relaySide = await assertRelaySide(base, s.session_id, seen, label);
  return { session: s.session_id, messages: seen.messages.length, streamEvents: seen.streamEvents, ...relaySide };
}

async function phaseWsNoAuth(base) {
  // Negative control: the same socket without authMessage must be refused (close code, no session data).
  const s = await createSession(base, 'sdk-compat websocket unauthenticated');
  const q = query({
    prompt: (async function* () {
      yield userMessage('should never arrive');
      await new Promise(() => {});
    })(),
    canUseTool: async () => ({ behavior: 'deny', message: 'no' }),
    websocket: { url: s.ws_url },
  });
  const got = [];
  let err = null;
  try {
    await withTimeout(
      (async () => {
        for await (const m of q) got.push(m);
      })(),
      PHASE_MS,
      '[websocket-noauth] the unauthenticated socket to be closed',
    );
  } catch (e) {
    if (e instanceof Failure) throw e;
    err = e;
  }
  check(got.length === 0, `[websocket-noauth] an unauthenticated socket received ${got.length} messages: ${short(got.map((m) => m.type))}`);
  const r = await api(base, 'GET', `/v1/code/sessions/${s.session_id}/events?after=0&limit=10000`);
  check(
    !(r.json?.events ?? []).some((e) => e.payload?.type === 'user' && e.payload?.message?.content === 'should never arrive'),
    '[websocket-noauth] an unauthenticated socket could post a user message',
  );
  return { closed: err ? String(err.message) : 'ended normally (close 1000/1001)' };
}

// ---------------------------------------------------------------- extended checks
/** The query() options of the SSE transport to the session `s` (as POST /v1/code/sessions gave it),
 * with the token; a resume cursor (`fromSequenceNum`) and more `headers` when given. */
function sseTransport(s, { fromSequenceNum, headers } = {}) {
  return {
    sse: {
      streamUrl: s.stream_url,
      sendUrl: s.send_url,
      sessionId: s.session_id,
      ...(fromSequenceNum === undefined ? {} : { fromSequenceNum }),
      headers: { Authorization: `Bearer ${TOKEN}`, ...headers },
    },
  };
}

function transportFor(kind, s) {
  return kind === 'sse'
    ? sseTransport(s)
    : { websocket: { url: s.ws_url, authMessage: { type: 'auth', credential: { type: 'oauth', token: TOKEN } } } };
}

async function lastRelayEvents(base, sessionId, n = 4) {
  const r = await api(base, 'GET', `/v1/code/sessions/${sessionId}/events?after=0&limit=10000`).catch(() => null);
  return (r?.json?.events ?? []).slice(-n).map((e) => ({ seq: e.sequence_num, source: e.source, payload: e.payload }));
}

/** The agent crashes mid-turn: the SDK consumer must learn it instead of waiting forever.
 * websocket: a yielded session_state_changed "ended" (or the iterator ending/throwing).
 * sse: the yielded session_state_changed "ended" (source "worker", relay_generated), then the transport
 * must end by itself: the relay closes the stream after the exit event, the SDK reconnects once, gets
 * 404 session_ended (final) and the iterator throws. No reconnect loop afterwards. */
async function phaseAgentExit(base, kind) {
  const label = `${kind}-crash`;
  const s = await createSession(base, `sdk-compat ${label}`);
  const abort = new AbortController();
  const q = query({
    prompt: (async function* () {
      yield userMessage('please crash');
      await new Promise((res) => abort.signal.addEventListener('abort', res));
    })(),
    abortController: abort,
    canUseTool: async () => ({ behavior: 'deny', message: 'no' }),
    ...transportFor(kind, s),
  });
  const kinds = [];
  const mine = () => streamGets.filter((g) => g.url === s.stream_url);
  let ended = null;
  let outcome;
  const t0 = Date.now();
  try {
    outcome = await withTimeout(
      (async () => {
        try {
          for await (const m of q) {
            kinds.push(m.type === 'system' ? `system:${m.subtype}` : m.type);
            if (m.type === 'system' && m.subtype === 'session_state_changed' && m.state === 'ended') {
              ended = {
                exit_code: m.exit_code ?? null,
                relay_generated: m.relay_generated ?? null,
                source: kind === 'sse' ? (getCcrEvent(q, m)?.source ?? null) : undefined,
                afterMs: Date.now() - t0,
              };
              if (kind !== 'sse') return { how: 'yielded system:session_state_changed state=ended', ...ended };
            }
          }
          return { how: 'iterator ended' };
        } catch (e) {
          return { how: `iterator threw: ${e?.name}: ${e?.message}`, code: e?.code ?? null, reason: e?.reason ?? null };
        }
      })(),
      PHASE_MS,
      `[${label}] the SDK consumer to learn that the agent exited${ended ? ' (it yielded the ended event, but its transport did not end)' : ''}`,
    );
  } catch (e) {
    abort.abort();
    const tail = await lastRelayEvents(base, s.session_id, 2);
    fail(
      `${e.message}\n  yielded: ${short(kinds.join(', '), 1000)}${kind === 'sse' ? `\n  SSE drop counts: ${short(getSseDropCounts(q) ?? {})}\n  stream GETs: ${short(mine())}` : ''}` +
        `\n  last events in the relay log: ${short(tail, 1200)}`,
    );
  }
  if (kind !== 'sse') {
    abort.abort();
    return outcome;
  }
  const endedAfterMs = Date.now() - t0;
  check(
    ended,
    `[${label}] the SDK never yielded system:session_state_changed state=ended (${outcome.how}); yielded: ${short(kinds.join(', '), 1000)}; ` +
      `SSE drop counts: ${short(getSseDropCounts(q) ?? {})}`,
  );
  check(ended.source === 'worker' && ended.relay_generated === true, `[${label}] ended event: ${short(ended)} (want source worker, relay_generated true)`);
  check(
    outcome.code === 404 && outcome.reason === 'session_ended',
    `[${label}] after the ended event the SDK's iterator should throw SSEHttpError 404 session_ended; got ${short(outcome)}; stream GETs: ${short(mine())}`,
  );
  // The transport is closed for good: no further GETs.
  const getsAtEnd = mine().length;
  await new Promise((r) => setTimeout(r, 3000));
  const gets = mine();
  check(gets.length === getsAtEnd, `[${label}] the SDK kept reconnecting after the 404: ${short(gets)}`);
  check(gets.length <= 3, `[${label}] ${gets.length} stream GETs for one crashed session: ${short(gets)}`);
  abort.abort();
  return {
    how: `yielded system:session_state_changed state=ended, then ${outcome.how}`,
    ended,
    iteratorEndedAfterMs: endedAfterMs,
    streamGets: gets.map((g) => `${g.status}${g.lastEventId ? ` (Last-Event-ID ${g.lastEventId})` : ''}`),
  };
}

/** Nobody answers in time (`--permission-timeout-secs 1`): the relay denies. The turn must complete and the
 * SDK's pending canUseTool must be told (its AbortSignal fires), so a UI can withdraw its dialog. */
async function phasePermissionTimeout(base, kind) {
  const label = `${kind}-permission-timeout`;
  const s = await createSession(base, `sdk-compat ${label}`);
  const abort = new AbortController();
  const LATE_MS = 5000;
  const state = { asked: 0, aborted: false, abortedAfterMs: null };
  const canUseTool = (toolName, input, opts) =>
    new Promise((res) => {
      state.asked += 1;
      const t0 = Date.now();
      const late = setTimeout(() => res({ behavior: 'allow', updatedInput: { ...input, command: 'echo too-late' } }), LATE_MS);
      opts?.signal?.addEventListener('abort', () => {
        state.aborted = true;
        state.abortedAfterMs = Date.now() - t0;
        clearTimeout(late);
        res({ behavior: 'deny', message: 'withdrawn' });
      });
    });
  const q = query({
    prompt: (async function* () {
      yield userMessage('nobody will answer the prompt');
      await new Promise((res) => abort.signal.addEventListener('abort', res));
    })(),
    abortController: abort,
    canUseTool,
    ...transportFor(kind, s),
  });
  const seen = [];
  let toolResult = null;
  try {
    await withTimeout(
      (async () => {
        for await (const m of q) {
          seen.push(m.type === 'system' ? `system:${m.subtype}` : m.type);
          if (m.type === 'user' && Array.isArray(m.message?.content)) {
            toolResult = m.message.content.find((b) => b?.type === 'tool_result') ?? toolResult;
          }
          if (m.type === 'result') return;
        }
      })(),
      PHASE_MS,
      `[${label}] the turn to complete after the relay's timeout deny`,
    );
  } catch (e) {
    abort.abort();
    fail(`${e instanceof Failure ? e.message : `[${label}] the SDK's query threw: ${e?.message}`}\n  yielded: ${short(seen.join(', '), 1000)}`);
  }
  check(state.asked === 1, `[${label}] want 1 canUseTool call, got ${state.asked}`);
  check(
    toolResult && toolResultText(toolResult).includes('No controller answered'),
    `[${label}] the tool_result does not carry the relay's deny message: ${short(toolResult)}`,
  );
  // give a withdraw signal (control_cancel_request) a moment to arrive after the result
  await new Promise((r) => setTimeout(r, 500));
  const dropCounts = kind === 'sse' ? { ...(getSseDropCounts(q) ?? {}) } : undefined;
  abort.abort();
  if (VERBOSE) {
    for (const e of await lastRelayEvents(base, s.session_id, 1000)) {
      const pl = e.payload ?? {};
      log(`[${label}] relay log #${e.seq} ${e.source} ${pl.type}/${pl.subtype ?? pl.request?.subtype ?? pl.response?.subtype ?? ''} ${short(pl.response ?? pl.request_id ?? '', 200)}`);
    }
  }
  check(
    state.aborted,
    `[${label}] the turn completed with the relay's deny, but the SDK's canUseTool was never told: its AbortSignal did not fire ` +
      `(no control_response or control_cancel_request for that request_id reached the SDK). A UI would keep showing the ` +
      `dialog, and its late answer would get a 409.` +
      (dropCounts ? ` SSE drop counts: ${short(dropCounts)}` : ''),
  );
  return { abortedAfterMs: state.abortedAfterMs, dropCounts };
}

// ---------------------------------------------------------------- main
async function main() {
  log(`sdk-compat: node ${process.version}, @anthropic-ai/claude-agent-sdk ${sdkVersion.version} (claudeCodeVersion ${sdkVersion.claudeCodeVersion}), G4 guard ${G4_TEXT_ENVELOPE_ARM_PORTED}`);
  const relay = BASE_URL ? null : new Relay('demo', { BRIDGE_DEMO_SCENARIO: 'default' });
  const base = relay ? await relay.start() : BASE_URL;
  log(relay ? `sdk-compat: relay ${RELAY_BIN} listening at ${base}` : `sdk-compat: against the running relay at ${base}`);
  const t0 = Date.now();
  if (ONLY !== 'ws') {
    const r = await phaseSse(base);
    log(`PASS sse: prompt answered with edited input, tool_result shows it, result:success; a replacement query resuming with fromSequenceNum ran a second turn with nothing repeated — ${JSON.stringify(r)} (${Date.now() - t0} ms)`);
  }
  if (ONLY !== 'sse') {
    const t1 = Date.now();
    const r = await phaseWs(base);
    log(`PASS websocket: prompt answered with edited input, tool_result shows it, result:success — ${JSON.stringify(r)} (${Date.now() - t1} ms)`);
    const t2 = Date.now();
    const n = await phaseWsNoAuth(base);
    log(`PASS websocket without authMessage refused: ${JSON.stringify(n)} (${Date.now() - t2} ms)`);
  }
  await relay?.stop();
  if (!EXTENDED) return;

  // Extended checks (on unless SDK_COMPAT_EXTENDED=0): behaviours beyond one turn that an SDK consumer relies on.
  // Each runs even if an earlier one failed; the run fails at the end if any did.
  const kinds = ONLY === 'ws' ? ['websocket'] : ONLY === 'sse' ? ['sse'] : ['sse', 'websocket'];
  const failures = [];
  const attempt = async (name, fn) => {
    const t = Date.now();
    try {
      log(`PASS ${name}: ${JSON.stringify(await fn())} (${Date.now() - t} ms)`);
    } catch (e) {
      if (!(e instanceof Failure)) throw e;
      failures.push(name);
      console.error(`FAIL ${name}: ${redact(e.message)}`);
    }
  };
  const crashRelay = new Relay('crash', { BRIDGE_DEMO_SCENARIO: 'crash' });
  const cbase = await crashRelay.start();
  for (const kind of kinds) {
    await attempt(`${kind} agent crash surfaced to the SDK consumer`, () => phaseAgentExit(cbase, kind));
  }
  await crashRelay.stop();
  const timeoutRelay = new Relay('permission-timeout', { BRIDGE_DEMO_SCENARIO: 'default' }, [
    '--permission-timeout-secs',
    '1',
  ]);
  const tbase = await timeoutRelay.start();
  for (const kind of kinds) {
    await attempt(`${kind} relay permission timeout settles the SDK's pending canUseTool`, () =>
      phasePermissionTimeout(tbase, kind),
    );
  }
  await timeoutRelay.stop();
  if (failures.length) fail(`${failures.length} extended check(s) failed: ${failures.join('; ')}`);
}

// Hard cap on the whole run, whatever hangs (each wait above is bounded by PHASE_MS already).
const TOTAL_MS = Number(process.env.SDK_COMPAT_TOTAL_MS || (EXTENDED ? 8 : 4) * PHASE_MS);
setTimeout(() => {
  console.error(`sdk-compat: FAIL: the whole run took longer than ${TOTAL_MS} ms`);
  console.error(tails());
  stopAll().finally(() => process.exit(1));
}, TOTAL_MS).unref();

let code = 0;
try {
  await main();
  log('sdk-compat: all checks passed');
} catch (e) {
  code = 1;
  console.error(`sdk-compat: FAIL: ${redact(e instanceof Failure ? e.message : e?.stack ?? e)}`);
  console.error(tails());
} finally {
  await stopAll();
}
process.exit(code);
