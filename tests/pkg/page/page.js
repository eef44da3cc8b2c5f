// A demo turn through pkg/ in a browser page served by the relay (same origin): log in with the token
// from the fragment (BridgeClient.login: the relay sets its HttpOnly cookie and returns the login
// secret that goes with it), then use the package with no credential at all.
// The outcome lands in window.__result for the test (tests/pkg/browser.test.mjs) and in the page.
import init, { BridgeClient, classify } from './pkg/bridge_console_client.js';

const log = (line) => { document.querySelector('[data-testid=log]').textContent += `${line}\n`; };
const showState = (s) => { document.querySelector('[data-testid=state]').textContent = s; };

function waitFor(items, predicate, what, ms = 30000) {
  return new Promise((ok, fail) => {
    const started = Date.now();
    const tick = () => {
      const hit = items.find((i) => predicate(i.msg));
      if (hit) return ok(hit);
      if (Date.now() - started > ms) return fail(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 10);
    };
    tick();
  });
}

async function turn(transport) {
  const { sessionId } = await BridgeClient.createSession({});
  const client = await BridgeClient.connect({ sessionId, transport });
  const items = [];
  const states = [];
  client.onState((s) => { states.push(s); showState(`${transport}: ${s}`); });
  const uuid = await client.sendUser('Please tidy up the build directory');
  // registered after the prompt went out: what arrived meanwhile is held for it
  client.onMessage((msg, seq, info) => items.push({ msg, seq, source: info.source }));
  const ask = await waitFor(items, (m) => classify(m) === 'can_use_tool', 'the permission prompt');
  const command = `echo edited-in-chromium-${transport}`;
  await client.respondToPermission(ask.msg.request_id, {
    behavior: 'allow',
    updatedInput: { ...ask.msg.request.input, command },
  });
  const toolUseId = ask.msg.request.tool_use_id;
  const result = await waitFor(items, (m) => m.type === 'result', 'the result');
  const toolMsg = items.find((i) => i.msg.type === 'user' && Array.isArray(i.msg.message.content)
    && i.msg.message.content.some((b) => b.type === 'tool_result' && b.tool_use_id === toolUseId));
  const block = toolMsg.msg.message.content.find((b) => b.type === 'tool_result');
  const toolResult = typeof block.content === 'string' ? block.content : block.content.map((b) => b.text || '').join('\n');
  log(`${transport}: ${toolResult.split('\n')[0]} → ${result.msg.subtype}, $${result.msg.total_cost_usd}`);
  const seqs = items.filter((i) => i.seq !== null).map((i) => i.seq);
  client.close();
  return {
    transport, sessionId, uuid, command, original: ask.msg.request.input.command, toolResult,
    resultSubtype: result.msg.subtype, seqs, states, cursor: client.cursor,
    classes: [...new Set(items.map((i) => classify(i.msg)))],
    sources: [...new Set(items.map((i) => i.source))],
  };
}

async function main() {
  await init();
  const params = new URLSearchParams(location.search);
  const token = new URLSearchParams(location.hash.slice(1)).get('login');
  history.replaceState(null, '', location.pathname + location.search); // the secret leaves the address bar
  // Without the cookie (and no token), the relay refuses: the Promise says so.
  const beforeLogin = await BridgeClient.createSession({}).then(() => 'created?!', (e) => e.message);
  log(`before login: ${beforeLogin}`);
  // The relay sets its HttpOnly cookie; the login secret that must go with it is kept where the
  // console keeps it, so nothing below passes a credential.
  const badLogin = await BridgeClient.login({ token: 'not-the-token' }).then(() => 'logged in?!', (e) => e.message);
  const { loginSecret, role } = await BridgeClient.login({ token });
  const kept = localStorage.getItem('bridge-console.login-secret');
  const turns = [];
  for (const transport of (params.get('transports') || 'sse').split(',')) turns.push(await turn(transport));
  return { ok: true, beforeLogin, badLogin, loginSecret, kept, role, turns };
}

main().then(
  (r) => { window.__result = r; log('done'); },
  (e) => { window.__result = { ok: false, error: String(e && e.message || e) }; log(`failed: ${e && e.message}`); },
);
