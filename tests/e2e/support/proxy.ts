// A cuttable HTTP/WebSocket proxy in front of the relay, on its own 127.0.0.1 port, for the reconnect flow.
// `cut(ms)` destroys every open connection (streams included) and refuses new ones for `ms`, like a network
// drop; then traffic flows again. Host and Origin are rewritten to the relay's own, so its Host/Origin
// allowlist accepts the proxied requests. Streaming responses are piped through unbuffered.
import * as http from 'node:http';
import * as net from 'node:net';

export interface CuttableProxy {
  /** http://127.0.0.1:PORT */
  url: string;
  cut(ms: number): Promise<void>;
  /** Number of connections destroyed by cuts so far. */
  killed(): number;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<CuttableProxy> {
  const up = new URL(target);
  const upHost = up.host;
  const sockets = new Set<net.Socket>();
  let downUntil = 0;
  let killed = 0;
  let selfOrigin = '';

  const rewrite = (headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders => {
    const h: http.OutgoingHttpHeaders = { ...headers, host: upHost };
    if (typeof h.origin === 'string' && h.origin === selfOrigin) h.origin = up.origin;
    if (typeof h.referer === 'string' && h.referer.startsWith(selfOrigin)) h.referer = up.origin + h.referer.slice(selfOrigin.length);
    return h;
  };

  const server = http.createServer((req, res) => {
    const preq = http.request(
      { host: up.hostname, port: up.port, method: req.method, path: req.url, headers: rewrite(req.headers) },
      (pres) => {
        res.writeHead(pres.statusCode ?? 502, pres.headers);
        res.flushHeaders();
        pres.pipe(res);
        pres.on('error', () => res.destroy());
      },
    );
    preq.on('socket', (s) => track(s));
    preq.on('error', () => res.destroy());
    req.pipe(preq);
  });
  server.on('upgrade', (req, socket: net.Socket, head) => {
    const upstream = net.connect(Number(up.port), up.hostname, () => {
      const headers = rewrite(req.headers);
      let raw = `${req.method} ${req.url} HTTP/1.1\r\n`;
      for (const [k, v] of Object.entries(headers)) {
        if (v === undefined) continue;
        for (const one of Array.isArray(v) ? v : [v]) raw += `${k}: ${one}\r\n`;
      }
      upstream.write(raw + '\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    track(upstream);
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  server.on('connection', (s) => {
    if (Date.now() < downUntil) {
      s.destroy();
      return;
    }
    track(s);
  });

  function track(s: net.Socket): void {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  selfOrigin = `http://127.0.0.1:${port}`;
  return {
    url: selfOrigin,
    async cut(ms: number) {
      downUntil = Date.now() + ms;
      for (const s of sockets) {
        killed++;
        s.destroy();
      }
      sockets.clear();
    },
    killed: () => killed,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
