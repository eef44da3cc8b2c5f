// The client package (pkg/) in Node: a demo turn against a real relay over SSE (and WebSocket and
// hybrid when this Node has a WebSocket), a reconnect mid-turn with nothing lost or repeated, the
// errors it reports, and the NDJSON helpers. Needs `scripts/pack.sh` and a built relay.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  ROOT, caughtUpEvents, collect, demoTurn, durableSeqs, expectedSeqs, freePort, loadPackage, relayEvents,
  startProxy, startRelay, waitFor,
} from './support.mjs';

let pkg;
let relay;

before(async () => {
  pkg = await loadPackage();
  relay = await startRelay();
});
after(async () => { await relay?.stop(); });

/** Waits until `log.states` ends with `state`. */
async function stateBecomes(log, state, ms = 10_000) {
  const until = Date.now() + ms;
  while (log.states.at(-1) !== state) {
    if (Date.now() > until) throw new Error(`state never became ${state}: ${log.states.join(' → ')}`);
    await new Promise((ok) => setTimeout(ok, 20));
  }
}

async function turnOver(transport) {
  const { BridgeClient } = pkg;
  const { baseUrl, token } = relay;
  const { sessionId } = await BridgeClient.createSession({ baseUrl, token, cwd: ROOT, permissionMode: 'default' });
  assert.match(sessionId, /^cse_/);
  const client = await BridgeClient.connect({ baseUrl, token, sessionId, transport });
  assert.equal(client.state, 'live');
  assert.equal(client.sessionId, sessionId);
  // Register the handler only after the prompt went out: what arrived meanwhile must be held for it.
  const log = collect(client, { register: false });
  const command = `echo edited-by-node-${transport}`;
  const turn = demoTurn(client, log, { command });
  await new Promise((ok) => setTimeout(ok, 300));
  client.onMessage(log.handler);
  const { uuid, request, toolResult, result } = await turn;
  assert.match(uuid, /^[0-9a-f-]{36}$/);
  assert.equal(request.tool_name, 'Bash');
  assert.notEqual(request.input.command, command, 'the edit changes the command');
  // The demo agent reports the command it actually ran.
  assert.ok(toolResult.startsWith(`$ ${command}`), `tool result: ${toolResult}`);
  assert.equal(result.subtype, 'success');
  assert.equal(result.is_error, false);
  assert.ok(result.total_cost_usd > 0);
  // Ephemeral frames have no seq; durable ones are dense and unique, exactly the relay's log.
  assert.ok(log.items.some((i) => i.msg.type === 'stream_event' && i.seq === null));
  const events = await caughtUpEvents(client, baseUrl, token, sessionId);
  const seqs = durableSeqs(log);
  assert.deepEqual(seqs, expectedSeqs(events));
  assert.ok(log.items.filter((i) => i.seq !== null).every((i) => i.info.source === 'worker'));
  assert.deepEqual(log.states, ['live']);
  client.close();
  await stateBecomes(log, 'offline');
  return { sessionId, log };
}

describe('a demo turn through pkg/', () => {
  test('over SSE + POST (Node 20 without flags)', async () => {
    await turnOver('sse');
  });

  const hasWs = typeof globalThis.WebSocket === 'function';
  test('over WebSocket', { skip: !hasWs && 'this Node has no global WebSocket' }, async () => {
    await turnOver('ws');
  });
  test('over hybrid (WebSocket down, POST up)', { skip: !hasWs && 'this Node has no global WebSocket' }, async () => {
    await turnOver('hybrid');
  });

  test('control requests, a denial with interrupt, and a resume from a cursor', async () => {
    const { BridgeClient, classify } = pkg;
    const { baseUrl, token } = relay;
    const { sessionId } = await BridgeClient.createSession({ baseUrl, token, cwd: ROOT });
    const client = await BridgeClient.connect({ baseUrl, token, sessionId });
    const log = collect(client);
    const modelId = await client.setModel('opus');
    const modeId = await client.setPermissionMode('acceptEdits');
    for (const id of [modelId, modeId]) {
      await waitFor(log, (m) => m.type === 'control_response' && m.response.request_id === id, `the answer to ${id}`);
    }
    const modeAnswer = log.items.find((i) => i.msg.type === 'control_response' && i.msg.response.request_id === modeId);
    assert.equal(modeAnswer.msg.response.subtype, 'success');
    assert.equal(modeAnswer.msg.response.response.mode, 'acceptEdits');
    await client.setPermissionMode('default');
    await client.sendUser('Please tidy up the build directory');
    const ask = await waitFor(log, (m) => classify(m) === 'can_use_tool', 'a permission prompt');
    await client.respondToPermission(ask.msg.request_id, { behavior: 'deny', message: 'not today', interrupt: true });
    const result = await waitFor(log, (m) => m.type === 'result', 'the result');
    assert.equal(result.msg.permission_denials.length, 1);
    // The request is settled: a second answer is refused by the relay, and says so.
    await assert.rejects(
      client.respondToPermission(ask.msg.request_id, { behavior: 'allow', updatedInput: ask.msg.request.input }),
      (e) => e instanceof Error && /respondToPermission: .*409/.test(e.message),
    );
    const interruptId = await client.interrupt();
    await waitFor(log, (m) => m.type === 'control_response' && m.response.request_id === interruptId, 'the interrupt answer');
    const cursor = client.cursor;
    assert.equal(cursor, Math.max(...durableSeqs(log)));
    client.close();

    // Resuming from a cursor delivers only what came after it.
    await client.sendUser('late').then(
      () => assert.fail('a send after close must not succeed'),
      (e) => assert.match(e.message, /sendUser: .*closed/),
    );
    const middle = durableSeqs(log)[Math.floor(durableSeqs(log).length / 2)];
    const resumed = await BridgeClient.connect({ baseUrl, token, sessionId, fromSeq: middle });
    const rlog = collect(resumed);
    await waitFor(rlog, () => durableSeqs(rlog).at(-1) >= cursor, 'the resumed history');
    assert.equal(durableSeqs(rlog)[0] > middle, true);
    // A fresh client posted nothing: it gets the other client's posts too, each event once.
    const events = (await relayEvents(baseUrl, token, sessionId)).filter((e) => e.sequence_num > middle);
    assert.deepEqual(durableSeqs(rlog), expectedSeqs(events, { posted: false }));
    resumed.close();
  });
});

describe('a reconnect mid-turn', () => {
  test('the stream is cut mid-frame twice; nothing is lost or repeated', async () => {
    const { BridgeClient } = pkg;
    // The proxy's port must exist before the relay starts, so that the relay accepts its Host.
    const port = await freePort();
    const direct = await startRelay({ args: ['--allowed-host', `127.0.0.1:${port}`] });
    const proxy = await startProxy({ port, target: direct.addr, afterBytes: 1200 });
    try {
      const { token } = direct;
      const { sessionId } = await BridgeClient.createSession({ baseUrl: proxy.baseUrl, token, cwd: ROOT });
      const client = await BridgeClient.connect({ baseUrl: proxy.baseUrl, token, sessionId });
      const log = collect(client);
      const command = 'echo after-the-cut';
      const { toolResult, result } = await demoTurn(client, log, {
        command,
        // The turn waits on the prompt: break the stream now and answer while it is down, so that
        // the rest of the turn is produced while the client is reconnecting.
        beforeAnswer: async () => {
          proxy.cutStream(2);
          await client.sendUser('and a follow-up while the stream breaks');
        },
      });
      assert.ok(toolResult.startsWith(`$ ${command}`), toolResult);
      assert.equal(result.subtype, 'success');
      // The follow-up is a second turn with its own prompt: allow it as asked, wait for its result,
      // then compare everything with the relay's log.
      const second = await waitFor(
        log,
        () => log.items.filter((i) => pkg.classify(i.msg) === 'can_use_tool').length >= 2,
        'the second permission prompt',
      );
      const secondAsk = log.items.filter((i) => pkg.classify(i.msg) === 'can_use_tool')[1];
      assert.ok(second);
      await client.respondToPermission(secondAsk.msg.request_id, { behavior: 'allow' });
      await waitFor(log, () => log.items.filter((i) => i.msg.type === 'result').length >= 2, 'the second result');
      assert.ok(proxy.cuts >= 1, `the proxy cut the stream (${proxy.cuts} cuts)`);
      assert.ok(log.states.includes('reconnecting'), `states: ${log.states.join(' → ')}`);
      const events = await caughtUpEvents(client, direct.baseUrl, token, sessionId);
      const seqs = durableSeqs(log);
      assert.equal(new Set(seqs).size, seqs.length, 'no duplicates');
      assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), 'in order');
      assert.deepEqual(seqs, expectedSeqs(events), 'exactly the relay log (own posts excepted)');
      // With its own posts (and the CLI's replays of them) the client has seen the log densely.
      const own = new Set(events.filter((e) => e.source === 'client').map((e) => e.payload.uuid));
      const all = [...seqs, ...events.filter((e) => own.has(e.payload.uuid)).map((e) => e.sequence_num)].sort((a, b) => a - b);
      assert.deepEqual(all, events.map((e) => e.sequence_num));
      assert.deepEqual(all, Array.from({ length: all.length }, (_, i) => i + 1), 'dense from 1');
      const uuids = log.items.map((i) => i.msg.uuid).filter(Boolean);
      assert.equal(new Set(uuids).size, uuids.length, 'no message twice');
      assert.ok(proxy.cuts >= 2, `the stream was cut twice (${proxy.cuts} cuts)`);
      console.log(`reconnect mid-turn: ${proxy.cuts} cuts mid-frame, ${proxy.streams} stream connections, ${seqs.length} durable messages delivered once each (seqs 1..${all.length} with the client's own posts), 0 lost, 0 duplicated`);
      client.close();
    } finally {
      await proxy.stop();
      await direct.stop();
    }
  });
});

describe('notices', () => {
  test('history the relay pruned is reported as a gap, and what is left is delivered', async () => {
    const { BridgeClient, classify } = pkg;
    const small = await startRelay({ args: ['--retention-events', '4'] });
    try {
      const { baseUrl, token } = small;
      const { sessionId } = await BridgeClient.createSession({ baseUrl, token, cwd: ROOT });
      const first = await BridgeClient.connect({ baseUrl, token, sessionId });
      const log = collect(first);
      await first.sendUser('Please tidy up the build directory');
      const ask = await waitFor(log, (m) => classify(m) === 'can_use_tool', 'a permission prompt');
      await first.respondToPermission(ask.msg.request_id, { behavior: 'deny', message: 'no', interrupt: true });
      await waitFor(log, (m) => m.type === 'result', 'the result');
      const events = await caughtUpEvents(first, baseUrl, token, sessionId);
      first.close();
      assert.ok(events[0].sequence_num > 2, `the relay pruned the start (first kept: ${events[0].sequence_num})`);

      const late = await BridgeClient.connect({ baseUrl, token, sessionId, fromSeq: 1 });
      const notices = [];
      const llog = collect(late);
      late.onNotice((n) => notices.push(n));
      await waitFor(llog, () => late.cursor >= events.at(-1).sequence_num, 'the retained history');
      assert.equal(notices.length, 1, JSON.stringify(notices));
      assert.equal(notices[0].kind, 'gap');
      assert.equal(notices[0].after, 1);
      assert.ok(notices[0].next <= events[0].sequence_num);
      assert.match(notices[0].message, /no longer has events 2 to/);
      assert.ok(durableSeqs(llog).every((seq) => seq >= notices[0].next));
      late.close();
    } finally {
      await small.stop();
    }
  });
});

describe('errors say what went wrong', () => {
  test('a wrong token, an unknown session, an unreachable relay', async () => {
    const { BridgeClient } = pkg;
    const { baseUrl, token } = relay;
    await assert.rejects(BridgeClient.createSession({ baseUrl, token: 'wrong-token' }), (e) => {
      assert.ok(e instanceof Error);
      assert.match(e.message, /^createSession: the relay answered HTTP 401/);
      return true;
    });
    const { sessionId } = await BridgeClient.createSession({ baseUrl, token });
    await assert.rejects(BridgeClient.connect({ baseUrl, token: 'wrong-token', sessionId }), /connect: could not connect to session cse_.*401.*check the token/);
    await assert.rejects(BridgeClient.connect({ baseUrl, token, sessionId: 'cse_nope' }), /connect: .*404.*no such session/);
    const dead = `http://127.0.0.1:${await freePort()}`;
    await assert.rejects(BridgeClient.createSession({ baseUrl: dead, token }), /createSession: could not reach the relay/);
    await assert.rejects(BridgeClient.connect({ baseUrl: dead, token, sessionId }), /connect: could not connect .*network error/);
  });

  test('bad arguments reject (never throw) with the name of the option', async () => {
    const { BridgeClient } = pkg;
    const { baseUrl, token } = relay;
    await assert.rejects(BridgeClient.connect({ baseUrl, token }), /connect: `sessionId` is required/);
    await assert.rejects(BridgeClient.connect({ baseUrl, token, sessionId: 's', transport: 'pigeon' }), /'sse', 'ws' or 'hybrid'/);
    await assert.rejects(BridgeClient.connect({ token, sessionId: 's' }), /`baseUrl` is required outside a page/);
    await assert.rejects(BridgeClient.connect(undefined), /connect: pass an options object/);
    const { sessionId } = await BridgeClient.createSession({ baseUrl, token });
    const client = await BridgeClient.connect({ baseUrl, token, sessionId });
    await assert.rejects(client.sendUser(42), /sendUser: the text must be a string/);
    await assert.rejects(client.respondToPermission('req-x', { behavior: 'maybe' }), /'allow' or 'deny'/);
    await assert.rejects(client.respondToPermission('req-x', { behavior: 'allow' }), /`updatedInput` is required/);
    await assert.rejects(
      client.respondToPermission('req-x', { behavior: 'allow', updatedInput: {}, updatedPermissions: [{ type: 'addRules' }] }),
      /updatedPermissions\[0\]/,
    );
    assert.throws(() => client.onMessage(5), /onMessage: the handler must be a function/);
    client.close();
  });

  test("'ws' without a global WebSocket (Node 20 unflagged) rejects clearly", async () => {
    const { BridgeClient } = pkg;
    const { baseUrl, token } = relay;
    const saved = globalThis.WebSocket;
    delete globalThis.WebSocket;
    try {
      for (const transport of ['ws', 'hybrid']) {
        await assert.rejects(
          BridgeClient.connect({ baseUrl, token, sessionId: 'cse_x', transport }),
          /this runtime has no global WebSocket .*--experimental-websocket.*use transport: 'sse'/,
        );
      }
    } finally {
      if (saved) globalThis.WebSocket = saved;
    }
  });
});

describe('parseNdjson and classify', () => {
  test('a real CLI capture: every CLI line parses and classifies', async () => {
    const { parseNdjson, classify } = pkg;
    const capture = readFileSync(join(ROOT, 'tests/fixtures/real-cli-2.1.332/live-capture-allow-updatedInput-replay.ndjson'), 'utf8');
    const cli = capture.split('\n').filter((l) => l.startsWith('<< ')).map((l) => l.slice(3)).join('\r\n');
    const { messages, errors } = parseNdjson(`${cli}\n\nnot json\n[1]\n{"type":"from_the_future","x":1}`);
    assert.equal(errors.length, 2);
    assert.deepEqual(errors.map((e) => e.message.split(':')[0]), ['not valid JSON', 'not a message']);
    assert.ok(errors[0].line > 3);
    const classes = new Set(messages.map(classify));
    for (const c of ['system', 'assistant', 'stream_event', 'can_use_tool', 'user', 'result', 'unknown']) {
      assert.ok(classes.has(c), `${c} in ${[...classes]}`);
    }
    assert.equal(classify(messages.at(-1)), 'unknown');
    assert.deepEqual(messages.at(-1), { type: 'from_the_future', x: 1 });
    assert.equal(classify({ type: 'control_request', request_id: 'r', request: { subtype: 'elicitation' } }), 'elicitation');
    assert.equal(classify('nope'), 'invalid');
    assert.equal(classify(null), 'invalid');
    assert.throws(() => parseNdjson(5), /parseNdjson: the text must be a string/);
  });
});
