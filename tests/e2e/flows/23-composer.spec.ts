// Flow 23: the composer's attachments and queued follow-ups (issue 15).
// - An image made in the test is attached through the file input, previewed, sent, shown in the transcript, and reaches
//   the agent as an image block (demo: the agent says what it saw; real: the fake model's request holds the block).
// - An unsupported file and an oversized text file get inline errors; a too-large image is downscaled; a text file
//   attaches; the draft's text survives all of it; an attachment is removed from the keyboard.
// - A follow-up typed while a turn runs is queued (not sent), edited, and delivered after the turn's result in a turn
//   of its own; a cancelled one is never sent; a queued one survives a reload and is delivered exactly once.
import * as path from 'node:path';
import { deflateSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { test, expect } from '../support/fixtures';
import { assistantTexts, openSession, press, sendMessage, tid, userMessages, waitForTurns } from '../support/console';

const shot = (name: string) => path.join(__dirname, '../artifacts/screenshots', `flow-23-${name}--${test.info().project.name}.png`);

// ---------------------------------------------------------------- a PNG encoder (RGB, no filter)
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();
function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}
/** A width×height RGB PNG; `pixel(x, y)` gives [r, g, b]. */
function png(width: number, height: number, pixel: (x: number, y: number) => [number, number, number]): Buffer {
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    for (let x = 0; x < width; x++) raw.set(pixel(x, y), row + 1 + x * 3);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 1 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** User messages of the relay's log whose content has an image block. */
function imageBlocks(events: Array<{ payload: Record<string, any> }>): Array<Record<string, any>> {
  return events
    .filter((e) => e.payload.type === 'user' && Array.isArray(e.payload.message?.content))
    .flatMap((e) => e.payload.message.content as Array<Record<string, any>>)
    .filter((b) => b.type === 'image');
}

test('flow 23: an image attachment is previewed, sent, shown and reaches the agent', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 23 image' });
  await openSession(page, backend, sid);
  // A 96×64 gradient with a red square: a real picture, a few KB.
  const image = png(96, 64, (x, y) => (x > 30 && x < 60 && y > 16 && y < 46 ? [220, 40, 30] : [x * 2, y * 3, 160]));
  const b64 = image.toString('base64');

  await tid(page, 'composer-attach').setInputFiles({ name: `shot-${uid}.png`, mimeType: 'image/png', buffer: image });
  const preview = tid(page, 'attachment-preview');
  await expect(preview).toBeVisible();
  const item = tid(preview, 'attachment-item');
  await expect(item).toHaveCount(1);
  await expect(item).toHaveAttribute('data-name', `shot-${uid}.png`);
  await expect(tid(item, 'attachment-size')).toContainText('PNG image');
  await expect(item.locator('img')).toHaveAttribute('src', `data:image/png;base64,${b64}`);
  await expect(tid(item, 'attachment-remove')).toHaveAccessibleName(`Remove shot-${uid}.png`);

  const text = `e2e-image what is in this picture ${uid}`;
  await tid(page, 'composer-input').fill(text);
  await page.screenshot({ path: shot('preview') });
  await press(tid(page, 'composer-send'));
  await expect(preview).toBeHidden();

  // Shown in the transcript as an image, from the message's own data.
  const row = userMessages(page).filter({ hasText: text });
  const shown = tid(row, 'user-image');
  await expect(shown).toHaveCount(1);
  await expect(shown).toHaveAttribute('src', `data:image/png;base64,${b64}`);
  await expect(shown).toHaveAttribute('alt', /Attached image 1 of 1 \(PNG, \d+ KB\)/);
  // The browser decoded it: a real image, not a broken icon.
  await expect.poll(() => shown.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(96);
  await waitForTurns(page, 1);
  if (backend.name === 'demo') {
    await expect(assistantTexts(page).first()).toContainText('I see an image (image/png,');
  }
  await page.screenshot({ path: shot('sent') });

  // The relay logged the message as sent: an image block with its media type and data, then the text.
  const events = await api.events(sid);
  const sent = events.find((e) => e.source === 'client' && e.payload.type === 'user');
  expect(sent?.payload.message.content).toEqual([
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64 } },
    { type: 'text', text },
  ]);
  if (backend.name === 'real') {
    // The real CLI passed it on to the model as an image block (and adds its own "[Image: source: …]" note).
    const reqs = await api.fakeModelRequests();
    const mine = reqs.filter((r) => JSON.stringify(r.body?.messages ?? []).includes(text));
    expect(mine.length, 'the fake model was asked about the picture').toBeGreaterThan(0);
    const blocks = (mine[0].body.messages as Array<Record<string, any>>)
      .filter((m) => m.role === 'user' && Array.isArray(m.content))
      .flatMap((m) => m.content as Array<Record<string, any>>);
    const img = blocks.find((b) => b.type === 'image');
    expect(img?.source?.media_type).toBe('image/png');
    expect(img?.source?.data).toBe(b64);
  } else {
    expect(imageBlocks(events).length).toBeGreaterThan(0);
  }
});

test('flow 23: files that cannot be attached say why, a large image is downscaled, the draft is kept', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 23 errors' });
  await openSession(page, backend, sid);
  const draft = `e2e-files keep this draft ${uid}`;
  await tid(page, 'composer-input').fill(draft);
  const attach = tid(page, 'composer-attach');
  await attach.setInputFiles([
    { name: 'report.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4 not really') },
    { name: 'huge.log', mimeType: 'text/plain', buffer: Buffer.alloc(300 * 1024, 'x') },
    { name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Notes\n\n<script>alert(1)</script> stays text\n') },
  ]);
  const errors = tid(page, 'attachment-error');
  await expect(errors).toHaveCount(2);
  await expect(errors.nth(0)).toContainText('report.pdf was not attached: application/pdf is not supported');
  await expect(errors.nth(1)).toContainText('huge.log was not attached: it is 300 KB, and text files can be at most 256 KB');
  const items = tid(page, 'attachment-item');
  await expect(items).toHaveCount(1);
  await expect(items.first()).toHaveAttribute('data-name', 'notes.md');
  await expect(tid(page, 'composer-input')).toHaveValue(draft);

  // Noise does not compress: 1400×1100 RGB is ~4.6 MB as PNG, ~6.2 MB as base64 — over 5 MB, so it is downscaled.
  const noise = randomBytes(1400 * 1100 * 3);
  const big = png(1400, 1100, (x, y) => {
    const i = (y * 1400 + x) * 3;
    return [noise[i], noise[i + 1], noise[i + 2]];
  });
  expect(big.length * 4 / 3).toBeGreaterThan(5 * 1024 * 1024);
  await attach.setInputFiles({ name: 'noise.png', mimeType: 'image/png', buffer: big });
  await expect(items).toHaveCount(2, { timeout: 30_000 });
  const noisy = page.locator('[data-testid="attachment-item"][data-name="noise.png"]');
  await expect(tid(noisy, 'attachment-size')).toContainText(/image, [\d.]+ [KM]B \(downscaled to \d+×\d+ from [\d.]+ MB\)/);
  await expect(errors).toHaveCount(0);
  await page.screenshot({ path: shot('errors-and-downscale') });

  // Removed from the keyboard: focus its remove button, press Enter.
  await tid(noisy, 'attachment-remove').focus();
  await page.keyboard.press('Enter');
  await expect(items).toHaveCount(1);

  await press(tid(page, 'composer-send'));
  const row = userMessages(page).filter({ hasText: draft });
  await expect(row).toHaveCount(1);
  // The text file went as a named text block, shown as text (never markup).
  await expect(row).toContainText('<attached-file name="notes.md">');
  await expect(row).toContainText('<script>alert(1)</script> stays text');
  await expect(row.locator('script')).toHaveCount(0);
  await waitForTurns(page, 1);
  const events = await api.events(sid);
  const sent = events.find((e) => e.source === 'client' && e.payload.type === 'user');
  expect(sent?.payload.message.content).toEqual([
    { type: 'text', text: '<attached-file name="notes.md">\n# Notes\n\n<script>alert(1)</script> stays text\n\n</attached-file>' },
    { type: 'text', text: draft },
  ]);
});

test('flow 23: a follow-up typed during a turn is queued, editable, cancellable, and delivered after the turn', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 23 queue' });
  await openSession(page, backend, sid);
  const first = `e2e-slow first ${uid}`;
  await sendMessage(page, first);
  await expect(assistantTexts(page).last()).toHaveAttribute('data-streaming', 'true');

  // Typed while Claude works: the button says Queue, and the message waits above the composer.
  const input = tid(page, 'composer-input');
  await input.fill(`followup draft ${uid}`);
  await expect(tid(page, 'composer-send')).toHaveText('Queue');
  await input.press('Enter');
  const queued = tid(page, 'queued-message');
  await expect(queued).toHaveCount(1);
  await expect(tid(queued, 'queued-text')).toHaveText(`followup draft ${uid}`);
  await expect(tid(page, 'queued-note')).toContainText('sends when Claude finishes');
  await expect(userMessages(page).filter({ hasText: `followup draft ${uid}` })).toHaveCount(0);

  // Edited before it goes.
  await press(tid(queued, 'queued-edit'));
  const edit = tid(page, 'queued-edit-input');
  await expect(edit).toBeFocused();
  await edit.fill(`followup edited ${uid}`);
  await press(tid(page, 'queued-save'));
  await expect(tid(queued, 'queued-text')).toHaveText(`followup edited ${uid}`);

  // A second one, cancelled: never sent.
  await input.fill(`cancel me ${uid}`);
  await press(tid(page, 'composer-send'));
  await expect(queued).toHaveCount(2);
  await page.screenshot({ path: shot('queued') });
  await press(tid(queued.nth(1), 'queued-cancel'));
  await expect(queued.filter({ hasText: `cancel me ${uid}` })).toHaveCount(0);

  // Delivered once the first turn's result is in, and answered in a turn of its own.
  await expect(userMessages(page).filter({ hasText: `followup edited ${uid}` })).toHaveCount(1, { timeout: 60_000 });
  await expect(queued).toHaveCount(0);
  await waitForTurns(page, 2);
  await page.screenshot({ path: shot('delivered') });

  const events = await api.events(sid);
  const seqOf = (pred: (p: Record<string, any>) => boolean) => events.find((e) => pred(e.payload))?.sequence_num ?? -1;
  const text = (p: Record<string, any>) => JSON.stringify(p.message?.content ?? '');
  const firstResult = seqOf((p) => p.type === 'result');
  const followup = seqOf((p) => p.type === 'user' && text(p).includes(`followup edited ${uid}`));
  expect(firstResult).toBeGreaterThan(0);
  expect(followup, 'sent after the first turn ended').toBeGreaterThan(firstResult);
  expect(events.some((e) => JSON.stringify(e.payload).includes(`cancel me ${uid}`)), 'the cancelled one never left').toBe(false);
  expect(events.some((e) => JSON.stringify(e.payload).includes(`followup draft ${uid}`)), 'the text before the edit never left').toBe(false);
  const results = events.filter((e) => e.payload.type === 'result');
  expect(results.length).toBe(2);
  if (backend.name === 'real') {
    const reqs = await api.fakeModelRequests();
    const has = (r: Record<string, any>, s: string) => JSON.stringify(r.body?.messages ?? []).includes(s);
    const mine = reqs.filter((r) => has(r, first));
    const firstTurn = mine.filter((r) => !has(r, `followup edited ${uid}`));
    const second = mine.filter((r) => has(r, `followup edited ${uid}`));
    expect(firstTurn.length, 'the first turn was asked without the follow-up').toBeGreaterThan(0);
    expect(second.length, 'the model got the follow-up').toBeGreaterThan(0);
    expect(Math.min(...second.map((r) => r.seq))).toBeGreaterThan(Math.max(...firstTurn.map((r) => r.seq)));
    expect(reqs.some((r) => has(r, `cancel me ${uid}`))).toBe(false);
  }
});

test('flow 23: a queued follow-up survives a reload and is delivered once; an interrupt holds the queue', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 23 reload' });
  await openSession(page, backend, sid);
  await sendMessage(page, `e2e-slow before the reload ${uid}`);
  await expect(assistantTexts(page).last()).toHaveAttribute('data-streaming', 'true');
  await tid(page, 'composer-input').fill(`after the reload ${uid}`);
  await press(tid(page, 'composer-send'));
  await expect(tid(page, 'queued-message')).toHaveCount(1);

  await page.reload();
  await expect(tid(page, 'transcript')).toBeVisible();
  // Back in the queue (or, if the turn ended meanwhile, already sent) — and delivered exactly once.
  await waitForTurns(page, 2, 60_000);
  await expect(userMessages(page).filter({ hasText: `after the reload ${uid}` })).toHaveCount(1);
  let events = await api.events(sid);
  const copies = events.filter((e) => e.payload.type === 'user' && JSON.stringify(e.payload.message?.content ?? '').includes(`after the reload ${uid}`) && !e.payload.isReplay);
  expect(copies.length, 'sent once').toBe(1);
  const firstResult = events.find((e) => e.payload.type === 'result')!.sequence_num;
  expect(copies[0].sequence_num).toBeGreaterThan(firstResult);

  // An interrupt holds what is queued; "Send now" sends it.
  await sendMessage(page, `e2e-slow to interrupt ${uid}`);
  await expect(assistantTexts(page).last()).toHaveAttribute('data-streaming', 'true');
  await tid(page, 'composer-input').fill(`held ${uid}`);
  await press(tid(page, 'composer-send'));
  await press(tid(page, 'interrupt-button'));
  await waitForTurns(page, 3);
  const list = tid(page, 'queued-list');
  await expect(list).toHaveAttribute('data-held', 'true');
  await expect(tid(page, 'queued-note')).toContainText('Claude was interrupted');
  await page.waitForTimeout(1_000);
  events = await api.events(sid);
  expect(events.some((e) => JSON.stringify(e.payload).includes(`held ${uid}`)), 'held: not sent by itself').toBe(false);
  await page.screenshot({ path: shot('held') });
  await press(tid(page, 'queued-send-now'));
  await expect(userMessages(page).filter({ hasText: `held ${uid}` })).toHaveCount(1);
  await waitForTurns(page, 4);
});

test('flow 23: images dropped on the transcript or pasted into the composer are attached', async ({ page, backend, api, workDir, uid }) => {
  const sid = await api.createSession({ cwd: workDir, title: 'flow 23 drop and paste' });
  await openSession(page, backend, sid);
  const image = png(40, 30, (x, y) => [x * 6, y * 8, 90]).toString('base64');
  // A file dragged from the desktop onto the transcript: attached, not opened by the browser.
  const dropped = await page.evaluate(
    ({ b64, name }) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], name, { type: 'image/png' }));
      const target = document.querySelector('[data-testid="transcript"]')!;
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      const ev = new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true });
      target.dispatchEvent(ev);
      return ev.defaultPrevented;
    },
    { b64: image, name: `dropped-${uid}.png` },
  );
  expect(dropped, 'the page handled the drop (the browser does not navigate to the file)').toBe(true);
  const items = tid(page, 'attachment-item');
  await expect(items).toHaveCount(1);
  await expect(items.first()).toHaveAttribute('data-name', `dropped-${uid}.png`);
  // A screenshot pasted into the composer: attached; the typed text stays as it was.
  await tid(page, 'composer-input').fill(`e2e-image pasted ${uid}`);
  await page.evaluate((b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], 'image.png', { type: 'image/png' }));
    document.querySelector('[data-testid="composer-input"]')!.dispatchEvent(
      new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }),
    );
  }, image);
  await expect(items).toHaveCount(2);
  await expect(tid(page, 'composer-input')).toHaveValue(`e2e-image pasted ${uid}`);
  await press(tid(page, 'composer-send'));
  const row = userMessages(page).filter({ hasText: `e2e-image pasted ${uid}` });
  await expect(tid(row, 'user-image')).toHaveCount(2);
  await waitForTurns(page, 1);
  const events = await api.events(sid);
  expect(imageBlocks(events.filter((e) => e.source === 'client')).length).toBe(2);
});
