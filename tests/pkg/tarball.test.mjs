// `npm pack` in pkg/ gives an installable tarball: install it into a fresh directory (offline: the
// package has no dependencies) and use it from Node by its name, both ways of initialising it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { PKG, startRelay } from './support.mjs';

let relay;
let dir;
before(async () => {
  relay = await startRelay();
  dir = mkdtempSync(join(tmpdir(), 'bridge-pkg-install-'));
});
after(async () => {
  await relay?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const npm = (args, cwd) => execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8' });

test('npm pack, npm install the tarball, import it by name', async () => {
  const version = readFileSync(join(PKG, '..', 'Cargo.toml'), 'utf8').match(/^\[package\][^[]*?^version = "([^"]+)"/m)[1];
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], PKG));
  assert.equal(packed.name, 'bridge-console-client');
  assert.equal(packed.version, version, 'the workspace version');
  assert.deepEqual(packed.files.map((f) => f.path).sort(), [
    'README.md', 'bridge_console_client.d.ts', 'bridge_console_client.js', 'bridge_console_client_bg.wasm',
    'bridge_console_client_bg.wasm.d.ts', 'node.js', 'package.json',
  ]);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  npm(['install', '--offline', join(dir, packed.filename)], dir);

  writeFileSync(join(dir, 'use.mjs'), `
    import { readFile } from 'node:fs/promises';
    import init, { BridgeClient, parseNdjson, classify } from 'bridge-console-client';
    import pkgJson from 'bridge-console-client/package.json' with { type: 'json' };
    if (process.argv[2] === 'bytes') {
      const wasm = new URL(import.meta.resolve('bridge-console-client/bridge_console_client_bg.wasm'));
      await init({ module_or_path: await readFile(wasm) });
    } else {
      await init();
    }
    const parsed = parseNdjson('{"type":"keep_alive"}\\nnope\\n');
    const [baseUrl, token] = [process.env.RELAY, process.env.TOKEN];
    const { sessionId } = await BridgeClient.createSession({ baseUrl, token });
    const client = await BridgeClient.connect({ baseUrl, token, sessionId });
    const state = client.state;
    client.close();
    console.log(JSON.stringify({ version: pkgJson.version, messages: parsed.messages.length, errors: parsed.errors.length,
      kind: classify(parsed.messages[0]), sessionId, state }));
  `);
  for (const how of ['default', 'bytes']) {
    const out = execFileSync(process.execPath, ['use.mjs', how], {
      cwd: dir, encoding: 'utf8', env: { ...process.env, RELAY: relay.baseUrl, TOKEN: relay.token }, timeout: 30_000,
    });
    const got = JSON.parse(out.trim().split('\n').at(-1));
    assert.deepEqual({ ...got, sessionId: got.sessionId.slice(0, 4) },
      { version, messages: 1, errors: 1, kind: 'keep_alive', sessionId: 'cse_', state: 'live' }, how);
  }
});
