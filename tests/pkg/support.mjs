// Shared by the package tests: a relay on the demo agent, a fault-injecting TCP proxy, the package
// itself (from pkg/, built by scripts/pack.sh) and a demo turn driven through it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const PKG = join(ROOT, 'pkg');

/** The relay binary: $BRIDGE_RELAY_BIN, else $CARGO_TARGET_DIR/debug/bridge-relay, else target/. */
export function relayBin() {
  if (process.env.BRIDGE_RELAY_BIN) return process.env.BRIDGE_RELAY_BIN;
  const target = process.env.CARGO_TARGET_DIR || join(ROOT, 'target');
  return join(target, 'debug', 'bridge-relay');
}

/**
 * Starts `bridge-relay --demo` on 127.0.0.1:0 with a fresh data dir and a random controller token.
 * Resolves to { baseUrl, addr, token, stop }. `args` are extra relay flags.
 */
export async function startRelay({ args = [], env = {} } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'bridge-pkg-relay-'));
  const token = randomBytes(24).toString('hex');
  const child = spawn(relayBin(), ['--demo', '--bind', '127.0.0.1:0', '--data-dir', dataDir, ...args], {
    env: { ...process.env, BRIDGE_RELAY_TOKEN: token, BRIDGE_DEMO_SPEED: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-8000); });
  const addr = await new Promise((ok, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`relay did not start in 60 s; stderr:\n${stderr}`)), 60_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (\S+)/);
      if (m) { clearTimeout(timer); ok(m[1]); }
    });
    child.on('exit', (code) => { clearTimeout(timer); fail(new Error(`relay exited (${code}); stderr:\n${stderr}`)); });
  });
  child.stdout.resume();
  return {
    addr,
    baseUrl: `http://${addr}`,
    token,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((ok) => child.once('exit', ok));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((ok) => setTimeout(ok, 5000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A port nobody listens on yet (for a proxy that has to exist before the relay allows its Host). */
export async function freePort() {
  const server = net.createServer();
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  await new Promise((ok) => server.close(ok));
  return port;
}

/**
 * A TCP proxy in front of the relay. `cutStream(n)` breaks the event stream `n` times: the open
 * stream connection, then each new one, is cut after `afterBytes` more bytes (mid-frame), the way a
 * flaky network does. `cuts` counts the cuts made, `streams` the stream connections seen.
 */
export async function startProxy({ port = 0, target, afterBytes = 1500 }) {
  const [host, targetPort] = target.split(':');
  const sockets = new Set();
  const open = new Set(); // live stream connections: { budget }
  const proxy = { cuts: 0, pendingCuts: 0, streams: 0 };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(targetPort), host);
    sockets.add(client); sockets.add(upstream);
    let stream = null;
    client.on('data', (chunk) => {
      // HTTP keep-alive: a connection that carried POSTs may carry the stream's GET next.
      if (!stream && /^GET \S*\/events\/stream/.test(chunk.toString('latin1', 0, 300))) {
        stream = { budget: null };
        proxy.streams += 1;
        open.add(stream);
        if (proxy.pendingCuts > 0) { proxy.pendingCuts -= 1; stream.budget = afterBytes; }
      }
      upstream.write(chunk);
    });
    const close = () => {
      client.destroy(); upstream.destroy();
      sockets.delete(client); sockets.delete(upstream);
      if (stream) open.delete(stream);
    };
    upstream.on('data', (chunk) => {
      if (stream && stream.budget !== null && chunk.length > stream.budget) {
        client.write(chunk.subarray(0, stream.budget));
        proxy.cuts += 1;
        close();
        return;
      }
      if (stream && stream.budget !== null) stream.budget -= chunk.length;
      client.write(chunk);
    });
    client.on('error', close); upstream.on('error', close);
    client.on('close', close); upstream.on('close', close);
  });
  await new Promise((ok) => server.listen(port, '127.0.0.1', ok));
  proxy.port = server.address().port;
  proxy.baseUrl = `http://127.0.0.1:${proxy.port}`;
  proxy.cutStream = (n = 1) => {
    for (const stream of open) {
      if (n > 0 && stream.budget === null) { stream.budget = afterBytes; n -= 1; }
    }
    proxy.pendingCuts += n;
  };
  proxy.stop = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((ok) => server.close(ok));
  };
  return proxy;
}

let loaded;
/** The package from pkg/, initialised once (through the Node entry point with the wasm's bytes). */
export async function loadPackage() {
  if (!loaded) {
    loaded = (async () => {
      const mod = await import(join(PKG, 'node.js'));
      await mod.default({ module_or_path: readFileSync(join(PKG, 'bridge_console_client_bg.wasm')) });
      return mod;
    })();
  }
  return loaded;
}

/** Resolves when `predicate` holds for some message of `log` (checked on every new one). */
export function waitFor(log, predicate, what, ms = 30_000) {
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => {
      log.watchers.delete(check);
      fail(new Error(`timed out waiting for ${what}; got types: ${log.items.map((i) => i.msg.type).join(',')}`));
    }, ms);
    const check = () => {
      const hit = log.items.find((i) => predicate(i.msg));
      if (hit) { clearTimeout(timer); log.watchers.delete(check); ok(hit); return true; }
      return false;
    };
    if (!check()) log.watchers.add(check);
  });
}

/** Collects what a client delivers: messages (with seq and info) and states. */
export function collect(client, { register = true } = {}) {
  const log = { items: [], states: [], watchers: new Set() };
  log.handler = (msg, seq, info) => {
    log.items.push({ msg, seq, info });
    for (const w of [...log.watchers]) w();
  };
  if (register) client.onMessage(log.handler);
  client.onState((s) => log.states.push(s));
  return log;
}

/** The text of a tool_result block. */
export function toolResultText(block) {
  const c = block.content;
  if (typeof c === 'string') return c;
  return (c || []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
}

/**
 * A demo turn: send a prompt, allow the Bash permission prompt with an edited command, and wait for
 * the result. `beforeAnswer` runs between the prompt and the answer (e.g. to cut the stream).
 * Resolves to { uuid, request, toolResult, result }.
 */
export async function demoTurn(client, log, { command, beforeAnswer } = {}) {
  const { classify } = await loadPackage();
  const uuid = await client.sendUser('Please tidy up the build directory');
  const ask = await waitFor(log, (m) => classify(m) === 'can_use_tool', 'a can_use_tool request');
  const request = ask.msg.request;
  if (beforeAnswer) await beforeAnswer(ask);
  const edited = { ...request.input, command };
  await client.respondToPermission(ask.msg.request_id, { behavior: 'allow', updatedInput: edited });
  const toolResult = await waitFor(
    log,
    (m) => m.type === 'user' && Array.isArray(m.message.content)
      && m.message.content.some((b) => b.type === 'tool_result' && b.tool_use_id === request.tool_use_id),
    'the tool result',
  );
  const result = await waitFor(log, (m) => m.type === 'result', 'the result');
  const block = toolResult.msg.message.content.find((b) => b.type === 'tool_result');
  return { uuid, request, toolResult: toolResultText(block), result: result.msg };
}

/** Checks that the durable messages were delivered once each with dense sequence numbers 1..n. */
export function durableSeqs(log) {
  return log.items.filter((i) => i.seq !== null).map((i) => i.seq);
}

/** GET the relay's event list (every durable event) for comparison. */
export async function relayEvents(baseUrl, token, sessionId) {
  const r = await fetch(`${baseUrl}/v1/code/sessions/${sessionId}/events?after=0&limit=10000`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!r.ok) throw new Error(`event list: HTTP ${r.status}`);
  return (await r.json()).events;
}

/**
 * The sequence numbers a client should have been given for `events` (the relay's log): every durable
 * event once, by payload uuid (the CLI's replay of a prompt repeats the prompt's uuid), and, for the
 * client that posted the `source: 'client'` events (`posted`), none of its own posts or their
 * replays: the transport drops those as echoes, exactly as in the console.
 */
export function expectedSeqs(events, { posted = true } = {}) {
  const seen = new Set(posted ? events.filter((e) => e.source === 'client').map((e) => e.payload?.uuid) : []);
  const out = [];
  for (const e of events) {
    if (posted && e.source === 'client') continue;
    const uuid = e.payload?.uuid;
    if (uuid && seen.has(uuid)) continue;
    if (uuid) seen.add(uuid);
    out.push(e.sequence_num);
  }
  return out;
}

/**
 * The relay's log once `client` has caught up with it (its cursor reached the last event; more may
 * arrive later, so the log is cut there).
 */
export async function caughtUpEvents(client, baseUrl, token, sessionId, ms = 10_000) {
  const until = Date.now() + ms;
  await new Promise((ok) => setTimeout(ok, 100)); // let the turn's trailing events be stored
  for (;;) {
    const events = await relayEvents(baseUrl, token, sessionId);
    const last = Math.max(0, ...events.map((e) => e.sequence_num));
    if (client.cursor >= last) return events;
    if (Date.now() > until) throw new Error(`the client's cursor ${client.cursor} never reached ${last}`);
    await new Promise((ok) => setTimeout(ok, 50));
  }
}
