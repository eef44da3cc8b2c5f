// A local Web Push service for the pocket flows. No real push service (FCM, autopush, APNs) is reachable
// here, so this one stands in for it and for the browser's end of the subscription:
//   * `PushReceiver` makes the subscription's key pair and auth secret (what the browser would make),
//     listens on 127.0.0.1:0 like a push service, records every push the relay sends, checks its VAPID
//     JWT (ES256 over the `k=` key, `aud` = this origin, `exp` within 12 h) and decrypts its aes128gcm
//     body (RFC 8291) with the subscription's private key;
//   * `deliver` hands a decrypted payload to the service worker through CDP
//     (`ServiceWorker.deliverPushMessage`), as the browser does with a message from its push service;
//   * `stubPushManager` is an init script making `PushManager.subscribe` return that subscription
//     (Chromium's own subscribe needs Google's push service, which this machine cannot reach).
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CDPSession } from '@playwright/test';

export interface ReceivedPush {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The decrypted JSON payload. */
  payload: Record<string, any>;
  /** The payload's exact plaintext. */
  text: string;
  jwt: { header: Record<string, any>; claims: Record<string, any> };
}

const b64u = (b: Buffer): string => b.toString('base64url');

export class PushReceiver {
  readonly ecdh = crypto.createECDH('prime256v1');
  readonly auth = crypto.randomBytes(16);
  readonly received: ReceivedPush[] = [];
  /** Requests that could not be verified or decrypted (each fails the flow). */
  readonly rejected: string[] = [];
  /** Status to answer the next pushes with (default 201). */
  nextStatus: number[] = [];
  private server?: http.Server;
  origin = '';

  constructor() {
    this.ecdh.generateKeys();
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          this.received.push(this.open(req, Buffer.concat(chunks)));
          res.writeHead(this.nextStatus.shift() ?? 201).end();
        } catch (e) {
          this.rejected.push(`${req.method} ${req.url}: ${(e as Error).message}`);
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** What `PushSubscription.toJSON()` would give for this receiver. */
  subscription(id = 'device-1'): { endpoint: string; expirationTime: null; keys: { p256dh: string; auth: string } } {
    return {
      endpoint: `${this.origin}/push/${id}`,
      expirationTime: null,
      keys: { p256dh: b64u(this.ecdh.getPublicKey()), auth: b64u(this.auth) },
    };
  }

  /** Waits for a push whose payload matches `pred`. */
  async waitFor(pred: (p: Record<string, any>) => boolean, timeoutMs = 20_000): Promise<ReceivedPush> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.received.find((r) => pred(r.payload));
      if (hit) return hit;
      if (this.rejected.length) throw new Error(`push rejected: ${this.rejected.join('; ')}`);
      if (Date.now() > end) {
        throw new Error(`no matching push within ${timeoutMs} ms; got: ${this.received.map((r) => r.text).join(' | ')}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private open(req: http.IncomingMessage, body: Buffer): ReceivedPush {
    if (req.method !== 'POST') throw new Error('expected POST');
    if (req.headers['content-encoding'] !== 'aes128gcm') throw new Error(`content-encoding ${req.headers['content-encoding']}`);
    if (!req.headers['ttl']) throw new Error('no TTL header');
    const jwt = this.verifyVapid(String(req.headers['authorization'] ?? ''));
    const text = this.decrypt(body).toString('utf8');
    if (Buffer.byteLength(text) > 3000) throw new Error(`payload of ${Buffer.byteLength(text)} bytes (> 3000)`);
    return { path: req.url ?? '', headers: req.headers, payload: JSON.parse(text), text, jwt };
  }

  /** RFC 8292: `vapid t=<JWT>, k=<public key>`; ES256 over the key in `k`. */
  private verifyVapid(authz: string): ReceivedPush['jwt'] {
    const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authz.trim());
    if (!m) throw new Error(`Authorization is not a VAPID header: ${authz.slice(0, 40)}`);
    const [h, c, s] = m[1].split('.');
    const key = crypto.createPublicKey({
      key: { kty: 'EC', crv: 'P-256', x: b64u(Buffer.from(m[2], 'base64url').subarray(1, 33)), y: b64u(Buffer.from(m[2], 'base64url').subarray(33, 65)) },
      format: 'jwk',
    });
    const ok = crypto.verify('sha256', Buffer.from(`${h}.${c}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'));
    if (!ok) throw new Error('VAPID JWT signature does not verify');
    const header = JSON.parse(Buffer.from(h, 'base64url').toString());
    const claims = JSON.parse(Buffer.from(c, 'base64url').toString());
    if (header.alg !== 'ES256') throw new Error(`JWT alg ${header.alg}`);
    if (claims.aud !== this.origin) throw new Error(`JWT aud ${claims.aud}, expected ${this.origin}`);
    const now = Date.now() / 1000;
    if (!(claims.exp > now && claims.exp <= now + 12 * 3600 + 60)) throw new Error(`JWT exp ${claims.exp} not within 12 h`);
    if (typeof claims.sub !== 'string' || !claims.sub) throw new Error('JWT has no sub');
    return { header, claims };
  }

  /** RFC 8291 + RFC 8188, one record. */
  private decrypt(body: Buffer): Buffer {
    const salt = body.subarray(0, 16);
    const idlen = body[20];
    const asPublic = body.subarray(21, 21 + idlen);
    const ciphertext = body.subarray(21 + idlen);
    const uaPublic = this.ecdh.getPublicKey();
    const secret = this.ecdh.computeSecret(asPublic);
    const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic]);
    const ikm = Buffer.from(crypto.hkdfSync('sha256', secret, this.auth, keyInfo, 32));
    const cek = Buffer.from(crypto.hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
    const nonce = Buffer.from(crypto.hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
    const d = crypto.createDecipheriv('aes-128-gcm', cek, nonce);
    d.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
    const padded = Buffer.concat([d.update(ciphertext.subarray(0, ciphertext.length - 16)), d.final()]);
    let end = padded.length - 1;
    while (end >= 0 && padded[end] === 0) end--;
    if (padded[end] !== 2) throw new Error('last record lacks the 0x02 padding delimiter');
    return padded.subarray(0, end);
  }
}

/** The service worker registration id for `scope`, from CDP (ServiceWorker domain must be enabled). */
export async function swRegistrationId(cdp: CDPSession, scope: string, timeoutMs = 15_000): Promise<string> {
  let found: string | undefined;
  cdp.on('ServiceWorker.workerRegistrationUpdated', (e: { registrations: Array<{ registrationId: string; scopeURL: string; isDeleted: boolean }> }) => {
    for (const r of e.registrations) if (r.scopeURL === scope && !r.isDeleted) found = r.registrationId;
  });
  await cdp.send('ServiceWorker.enable');
  const end = Date.now() + timeoutMs;
  while (!found) {
    if (Date.now() > end) throw new Error(`no service worker registration for ${scope}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return found;
}

/** Hands a decrypted push to the service worker, as the browser does. */
export async function deliver(cdp: CDPSession, origin: string, registrationId: string, push: ReceivedPush): Promise<void> {
  await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data: push.text });
}

/**
 * Init script: `PushManager.subscribe` / `getSubscription` answer with `sub` (and remember it until
 * `unsubscribe`), so the console registers our local push service's endpoint with the relay.
 */
export function stubPushManager(sub: ReturnType<PushReceiver['subscription']>): string {
  return `(() => {
    const sub = ${JSON.stringify(sub)};
    const key = (name) => { const s = atob(sub.keys[name].replace(/-/g, '+').replace(/_/g, '/')); const a = new Uint8Array(s.length); for (let i = 0; i < s.length; i++) a[i] = s.charCodeAt(i); return a.buffer; };
    // Survives reloads like a real subscription (kept by the browser until unsubscribed).
    const K = '__e2e_push_subscribed';
    let active = localStorage.getItem(K) === sub.endpoint;
    const make = () => ({ endpoint: sub.endpoint, expirationTime: null, options: { userVisibleOnly: true },
      getKey: key, toJSON: () => JSON.parse(JSON.stringify(sub)), unsubscribe: async () => { active = false; localStorage.removeItem(K); return true; } });
    if (self.PushManager) {
      PushManager.prototype.subscribe = async function () { active = true; localStorage.setItem(K, sub.endpoint); return make(); };
      PushManager.prototype.getSubscription = async function () { return active ? make() : null; };
    }
  })();`;
}
