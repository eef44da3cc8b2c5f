/* Bridge Console service worker (scope "/", served no-cache by the relay).
 *
 * - Precaches the console's build (the list below is written by scripts/sw-precache.sh, a Trunk
 *   post_build hook: never edit it by hand) into a cache named after the build.
 * - Navigations: network first (with the mirrored login secret, so the relay can put the session
 *   list in the page), the cached shell when the relay cannot be reached.
 *   Precached files: cache first. The API (/v1/), WebSockets (/ws/), /healthz and event streams are
 *   never touched (no respondWith): they always go to the network as if there were no worker.
 * - A new build installs in the background and waits; the console offers "New version — reload"
 *   and only then posts {type: "SKIP_WAITING"}.
 * - Web Push: shows needs_you / turn_done / agent_exited / test, closes a prompt's notification on
 *   `resolved`, answers Allow / Deny from the notification through POST /v1/push/answer with this
 *   device's subscription id (Cache Storage "bridge-device", key "/__bridge/device"), and a click
 *   focuses or opens the console on the session.
 *
 * Tests: handlers also run for synthetic events (`self.dispatchEvent(new NotificationEvent(...))`,
 * whose waitUntil throws); the promise of the last handled push / click is on
 * `self.__bridgeLastPush` / `self.__bridgeLastAction` and resolves to what was done.
 */
'use strict';

// Written by scripts/sw-precache.sh at build time.
self.__PRECACHE = [];
const BUILD_ID = '__BUILD_ID__';

const SHELL_CACHE_PREFIX = 'bridge-shell-';
const SHELL_CACHE = SHELL_CACHE_PREFIX + BUILD_ID;
const DEVICE_CACHE = 'bridge-device';
const DEVICE_KEY = '/__bridge/device';
// The login secret the console mirrors here ({"login_secret": "…"}): sent in X-Bridge-Login, since
// the login cookie alone is refused.
const LOGIN_KEY = '/__bridge/login';
const SHELL = '/index.html';
const ICON = '/icons/icon-192.png';
const PRECACHED = new Set(self.__PRECACHE);

self.__bridgeBuildId = BUILD_ID;
self.__bridgeLastAction = Promise.resolve(null);
self.__bridgeLastPush = Promise.resolve(null);

/** event.waitUntil, tolerating synthetic events (they throw); the promise runs either way. */
function keepAlive(event, promise) {
  try {
    event.waitUntil(promise);
  } catch (_) {
    /* a synthetic event: nothing keeps the worker alive, the promise still runs */
  }
  return promise;
}

// ------------------------------------------------------------------------------ lifecycle

self.addEventListener('install', (event) => {
  keepAlive(
    event,
    caches.open(SHELL_CACHE).then((cache) =>
      // `reload`: straight from the relay, never from the HTTP cache.
      cache.addAll(self.__PRECACHE.map((url) => new Request(url, { cache: 'reload' }))),
    ),
  );
  // No skipWaiting here: a new build waits until the person chooses to reload.
});

self.addEventListener('activate', (event) => {
  keepAlive(
    event,
    (async () => {
      const names = await caches.keys();
      const old = names.filter((n) => n.startsWith(SHELL_CACHE_PREFIX) && n !== SHELL_CACHE);
      await Promise.all(old.map((n) => caches.delete(n)));
      // First install: take the open console windows now. An update takes them over when the
      // person reloads (SKIP_WAITING), which is also when their pages are replaced.
      if (old.length === 0) await self.clients.claim();
    })(),
  );
});

self.addEventListener('message', (event) => {
  const data = event.data || {};
  if (data.type === 'SKIP_WAITING') self.skipWaiting();
});

// ------------------------------------------------------------------------------ fetch

/** Requests the worker never answers: the API, streams, sockets, other origins, writes. */
function passThrough(request, url) {
  if (request.method !== 'GET') return true;
  if (url.origin !== self.location.origin) return true;
  const p = url.pathname;
  if (p === '/v1' || p.startsWith('/v1/')) return true;
  if (p === '/ws' || p.startsWith('/ws/')) return true;
  if (p === '/healthz') return true;
  if (p === '/sw.js') return true;
  const accept = request.headers.get('accept') || '';
  if (accept.includes('text/event-stream')) return true;
  if (request.headers.get('upgrade')) return true;
  return false;
}

async function cachedShell() {
  const cache = await caches.open(SHELL_CACHE);
  return (await cache.match(SHELL)) || (await caches.match(SHELL));
}

/**
 * A navigation as the relay should see it: with the login secret the console mirrored, so a
 * signed-in browser's page comes with its session list already in it (the relay refuses the login
 * cookie alone; see crates/relay/src/http/first_screen.rs). That page is per person and
 * `no-store`: it is never put in a cache here (offline, the precached static shell is used).
 */
async function withLoginSecret(request) {
  const secret = await loginSecret();
  if (!secret) return request;
  const headers = new Headers(request.headers);
  headers.set('x-bridge-login', secret);
  // A navigation request cannot be copied with changes: a same-origin GET of its URL instead.
  return new Request(request.url, {
    headers,
    credentials: 'include',
    cache: 'no-store',
    redirect: 'manual',
    referrerPolicy: 'no-referrer',
  });
}

async function networkFirst(request) {
  try {
    const response = await fetch(await withLoginSecret(request));
    // A proxy in front of a stopped relay answers 502-504: the cached shell is better.
    if (response.status >= 502 && response.status <= 504) {
      const shell = await cachedShell();
      if (shell) return shell;
    }
    return response;
  } catch (err) {
    const shell = await cachedShell();
    if (shell) return shell;
    throw err;
  }
}

async function cacheFirst(request, url) {
  const cache = await caches.open(SHELL_CACHE);
  const hit = await cache.match(url.pathname);
  if (hit) return hit;
  return fetch(request);
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (passThrough(request, url)) return;
  if (request.mode === 'navigate') {
    event.respondWith(networkFirst(request));
  } else if (PRECACHED.has(url.pathname)) {
    event.respondWith(cacheFirst(request, url));
  }
});

// ------------------------------------------------------------------------------ push

function promptTag(sessionId, requestId) {
  return `bridge:${sessionId}:${requestId}`;
}

/** The notification tag of a push message (a newer one with the same tag replaces the older). */
function tagFor(msg) {
  const sid = msg.session_id || '';
  switch (msg.type) {
    case 'needs_you':
      return msg.request_id ? promptTag(sid, msg.request_id) : `bridge:${sid}:needs-you`;
    case 'turn_done':
      return `bridge:${sid}:turn`;
    case 'agent_exited':
      return `bridge:${sid}:exit`;
    case 'test':
      return 'bridge:test';
    default:
      return `bridge:${sid}:${msg.type || 'other'}`;
  }
}

/** The session a console URL shows (`/s/<id>`), or ''. */
function sessionOfUrl(href) {
  try {
    const url = new URL(href);
    if (url.origin !== self.location.origin || !url.pathname.startsWith('/s/')) return '';
    return decodeURIComponent(url.pathname.slice(3).split('/')[0] || '');
  } catch (_) {
    return '';
  }
}

async function windows() {
  return self.clients.matchAll({ type: 'window', includeUncontrolled: true });
}

/**
 * The session a console window shows: it is asked (it knows after in-page navigation, which
 * `Client.url` may not reflect); a window that does not answer within 400 ms is judged by its URL.
 */
function clientSession(client) {
  return new Promise((resolve) => {
    const fallback = () => resolve(sessionOfUrl(client.url));
    let timer;
    try {
      const channel = new MessageChannel();
      timer = setTimeout(fallback, 400);
      channel.port1.onmessage = (e) => {
        clearTimeout(timer);
        const sid = e.data && 'session_id' in e.data ? e.data.session_id : undefined;
        if (sid === undefined) fallback();
        else resolve(sid || '');
      };
      client.postMessage({ type: 'bridge:which-session' }, [channel.port2]);
    } catch (_) {
      clearTimeout(timer);
      fallback();
    }
  });
}

/** Whether a focused console window shows this session (it shows the dialog already). */
async function shownInFocusedWindow(sessionId) {
  if (!sessionId) return false;
  const focused = (await windows()).filter((c) => c.focused && c.visibilityState !== 'hidden');
  for (const c of focused) {
    if ((await clientSession(c)) === sessionId) return true;
  }
  return false;
}

async function closeTagged(tag) {
  const list = await self.registration.getNotifications({ tag });
  list.forEach((n) => n.close());
  return list.length;
}

async function closeResolved(msg) {
  const sid = msg.session_id || '';
  if (msg.request_id) return closeTagged(promptTag(sid, msg.request_id));
  // No request id: close every prompt of the session.
  const list = await self.registration.getNotifications();
  const mine = list.filter((n) => (n.data || {}).session_id === sid && (n.data || {}).type === 'needs_you');
  mine.forEach((n) => n.close());
  return mine.length;
}

async function handlePush(msg) {
  if (!msg || typeof msg !== 'object') {
    // Unreadable: say something rather than nothing (browsers require a visible notification).
    await self.registration.showNotification('Bridge Console', {
      body: 'A session has news.',
      tag: 'bridge:unreadable',
      icon: ICON,
      data: { url: '/' },
    });
    return { shown: 'bridge:unreadable' };
  }
  if (msg.type === 'resolved') {
    const closed = await closeResolved(msg);
    return { closed };
  }
  if (msg.type !== 'test' && (await shownInFocusedWindow(msg.session_id))) {
    return { suppressed: true };
  }
  const tag = tagFor(msg);
  const sid = msg.session_id || '';
  const options = {
    body: msg.body || '',
    tag,
    icon: ICON,
    badge: ICON,
    timestamp: Date.now(),
    data: Object.assign({}, msg, { url: msg.url || (sid ? `/s/${encodeURIComponent(sid)}` : '/') }),
  };
  if (msg.type === 'needs_you') {
    options.requireInteraction = true;
    if (msg.answerable === true && msg.request_id) {
      options.actions = [
        { action: 'allow', title: 'Allow' },
        { action: 'deny', title: 'Deny' },
      ];
    }
  }
  await self.registration.showNotification(msg.title || 'Bridge Console', options);
  return { shown: tag };
}

self.addEventListener('push', (event) => {
  let msg = null;
  try {
    msg = event.data ? event.data.json() : null;
  } catch (_) {
    msg = null;
  }
  const done = handlePush(msg).catch((e) => ({ error: String(e) }));
  self.__bridgeLastPush = done;
  keepAlive(event, done);
});

// ------------------------------------------------------------------------------ device

/** This device's subscription record, written by the console when push was enabled. */
async function deviceRecord() {
  try {
    const cache = await caches.open(DEVICE_CACHE);
    const hit = await cache.match(DEVICE_KEY);
    return hit ? await hit.json() : null;
  } catch (_) {
    return null;
  }
}

/** The login secret mirrored by the console, or null. */
async function loginSecret() {
  try {
    const cache = await caches.open(DEVICE_CACHE);
    const hit = await cache.match(LOGIN_KEY);
    const v = hit ? await hit.json() : null;
    return v && typeof v.login_secret === 'string' ? v.login_secret : null;
  } catch (_) {
    return null;
  }
}

async function saveDeviceRecord(record) {
  const cache = await caches.open(DEVICE_CACHE);
  await cache.put(
    DEVICE_KEY,
    new Response(JSON.stringify(record), { headers: { 'content-type': 'application/json' } }),
  );
}

// The browser replaced the subscription (expiry, key rotation): register the new one in its place.
self.addEventListener('pushsubscriptionchange', (event) => {
  const done = (async () => {
    const record = (await deviceRecord()) || {};
    let sub = event.newSubscription;
    if (!sub && event.oldSubscription) {
      sub = await self.registration.pushManager.subscribe(event.oldSubscription.options);
    }
    if (!sub) return { resubscribed: false };
    const body = Object.assign(sub.toJSON(), {});
    if (record.label) body.label = record.label;
    if (Array.isArray(record.events) && record.events.length) body.events = record.events;
    const secret = await loginSecret();
    const res = await fetch('/v1/push/subscriptions', {
      method: 'POST',
      credentials: 'include',
      headers: Object.assign(
        { 'content-type': 'application/json', accept: 'application/json' },
        secret ? { 'x-bridge-login': secret } : {},
      ),
      body: JSON.stringify(body),
    });
    if (!res.ok) return { resubscribed: false, status: res.status };
    const { id } = await res.json();
    await saveDeviceRecord(Object.assign({}, record, { subscription_id: id, endpoint: sub.endpoint }));
    return { resubscribed: true, id };
  })().catch((e) => ({ error: String(e) }));
  keepAlive(event, done);
});

// ------------------------------------------------------------------------------ clicks

async function errorMessage(res) {
  try {
    const body = await res.json();
    if (body && body.error && body.error.message) return body.error.message;
  } catch (_) {
    /* not JSON */
  }
  return `the relay answered HTTP ${res.status}`;
}

/** Replaces a notification (same tag) with a plain one saying what happened; a click opens the console. */
async function replaceWith(notification, data, title, body) {
  notification.close();
  await self.registration.showNotification(title, {
    body,
    tag: notification.tag || tagFor(data),
    icon: ICON,
    data: Object.assign({}, data, { answerable: false, outcome: title }),
  });
}

async function answer(notification, data, decision) {
  const record = await deviceRecord();
  const payload = {
    session_id: data.session_id,
    request_id: data.request_id,
    decision,
    subscription_id: record ? record.subscription_id : null,
  };
  const secret = await loginSecret();
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  if (secret) headers['x-bridge-login'] = secret;
  let res;
  try {
    res = await fetch('/v1/push/answer', {
      method: 'POST',
      credentials: 'include',
      headers,
      body: JSON.stringify(payload),
    });
  } catch (e) {
    const message = 'the relay cannot be reached';
    await replaceWith(notification, data, 'Could not answer', `Could not answer: ${message}. Tap to open the console.`);
    return { ok: false, decision, status: 0, message };
  }
  if (res.ok) {
    notification.close();
    return { ok: true, decision, status: res.status };
  }
  const message = await errorMessage(res);
  if (res.status === 409) {
    await replaceWith(notification, data, 'Already answered', message);
  } else {
    await replaceWith(notification, data, 'Could not answer', `Could not answer: ${message}. Tap to open the console.`);
  }
  return { ok: false, decision, status: res.status, message };
}

/**
 * The console page a notification's `url` names, or the console's start when it names anything
 * else: a notification never opens another origin (nor a `javascript:` or `data:` URL).
 */
function sameOriginTarget(url) {
  let target;
  try {
    target = new URL(url || '/', self.location.origin);
  } catch (_) {
    target = null;
  }
  if (!target || target.origin !== self.location.origin) target = new URL('/', self.location.origin);
  return target;
}

/** Focuses a console window on `url` (asking it to open the session), or opens one. */
async function openConsole(url) {
  const target = sameOriginTarget(url);
  const path = target.pathname + target.search;
  const wanted = sessionOfUrl(target.href);
  const list = (await windows()).filter((c) => new URL(c.url).origin === self.location.origin);
  let exact;
  for (const c of list) {
    const shown = await clientSession(c);
    if (wanted ? shown === wanted : new URL(c.url).pathname === target.pathname) {
      exact = c;
      break;
    }
  }
  const client = exact || list.find((c) => c.focused) || list[0];
  if (client) {
    try {
      await client.focus();
    } catch (_) {
      /* only a real click may focus a window */
    }
    if (!exact) client.postMessage({ type: 'bridge:navigate', url: path });
    return { focused: true, navigated: !exact, url: path };
  }
  try {
    await self.clients.openWindow(target.href);
    return { opened: true, url: path };
  } catch (e) {
    return { opened: false, url: path, error: String(e) };
  }
}

async function handleClick(notification, action) {
  const data = notification.data || {};
  if ((action === 'allow' || action === 'deny') && data.answerable === true && data.request_id && data.session_id) {
    return answer(notification, data, action);
  }
  notification.close();
  return openConsole(data.url);
}

self.addEventListener('notificationclick', (event) => {
  const done = handleClick(event.notification, event.action || '').catch((e) => ({ error: String(e) }));
  self.__bridgeLastAction = done;
  keepAlive(event, done);
});
