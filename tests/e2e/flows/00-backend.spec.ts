// Backend smoke (no UI): the relay + agent pair each project runs against answers a turn and a permission
// prompt over the relay HTTP API. When this fails the browser flows cannot pass; it pins down whether a
// failure is the console's or the backend's. Runs once per backend (desktop projects only).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, expect, type RelayApi } from '../support/fixtures';

test.beforeEach(({}, testInfo) => {
  test.skip(testInfo.project.name.endsWith('-phone'), 'backend checks run once per backend');
});

async function post(api: RelayApi, sid: string, payload: Record<string, unknown>): Promise<void> {
  const r = await api.ctx.post(`/v1/code/sessions/${sid}/events`, { data: { session_id: sid, events: [{ payload }] } });
  expect(r.ok(), `POST events: ${r.status()} ${await r.text()}`).toBeTruthy();
}

async function waitFor(api: RelayApi, sid: string, pred: (p: Record<string, any>) => boolean, what: string) {
  let found: Record<string, any> | undefined;
  await expect
    .poll(async () => {
      found = (await api.events(sid)).map((e) => e.payload).find(pred);
      return !!found;
    }, { message: `waiting for ${what}`, timeout: 45_000 })
    .toBe(true);
  return found!;
}

const user = (text: string) => ({
  type: 'user',
  uuid: crypto.randomUUID(),
  session_id: '',
  parent_tool_use_id: null,
  message: { role: 'user', content: text },
});

test('backend: a turn, a prompt answered with an edited command, and the result', async ({ backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'backend smoke' });
  const session = await api.session(sid);
  expect(session.id).toBe(sid);

  await post(api, sid, user(`e2e-basic smoke ${uid}`));
  const first = await waitFor(api, sid, (p) => p.type === 'result', 'the first result');
  expect(first.is_error).toBe(false);
  expect(String(first.result)).toContain('E2E-BASIC-DONE');

  await post(api, sid, user(`e2e-bash smoke ${uid}`));
  const ask = await waitFor(api, sid, (p) => p.type === 'control_request' && p.request?.subtype === 'can_use_tool', 'can_use_tool');
  expect(ask.request.tool_name).toBe('Bash');
  expect(ask.request.input.command).toBe('touch e2e-original.txt');
  const edited = `touch e2e-smoke-${uid}.txt`;
  await post(api, sid, {
    type: 'control_response',
    response: {
      subtype: 'success',
      request_id: ask.request_id,
      response: { behavior: 'allow', updatedInput: { ...ask.request.input, command: edited }, toolUseID: ask.request.tool_use_id },
    },
  });
  await expect
    .poll(async () => (await api.events(sid)).filter((e) => e.payload.type === 'result').length, { timeout: 45_000 })
    .toBe(2);
  const tool = await waitFor(
    api,
    sid,
    (p) => p.type === 'user' && Array.isArray(p.message?.content) && p.message.content[0]?.type === 'tool_result',
    'the tool_result',
  );
  expect(tool.message.content[0].tool_use_id).toBe(ask.request.tool_use_id);
  if (backend.name === 'real') {
    expect(fs.existsSync(path.join(workDir, `e2e-smoke-${uid}.txt`)), 'the edited command ran').toBe(true);
    expect(fs.existsSync(path.join(workDir, 'e2e-original.txt'))).toBe(false);
    const init = await waitFor(api, sid, (p) => p.type === 'system' && p.subtype === 'init', 'system/init');
    console.log(`[backend smoke] real CLI ${init.claude_code_version}, model ${init.model}, cwd ${init.cwd}`);
    expect(init.cwd).toBe(workDir);
  } else {
    expect(JSON.stringify(tool.message.content[0].content)).toContain(edited);
  }
});
