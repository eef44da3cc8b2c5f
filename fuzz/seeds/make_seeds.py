#!/usr/bin/env python3
"""Writes the committed seed corpus under fuzz/corpus/<target>/ (small files only).

NDJSON seeds are lines of the real CLI captures and the hand-made corpus in tests/fixtures (each
at most 4 KiB), one per message kind, plus a few multi-line pieces with CRLF and blank lines. The
other targets get hand-written samples. Run it again after changing it; files are named by content.
"""
import hashlib, json, os, pathlib

root = pathlib.Path(__file__).resolve().parents[2]
corpus = root / "fuzz" / "corpus"


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


# ndjson: parameter byte 0 (real cap, chunk sizes 1..), then the stream.
seen = set()
lines = []
for f in sorted((root / "tests/fixtures").rglob("*.ndjson")):
    for line in f.read_bytes().splitlines():
        if line[:3] in (b">> ", b"<< "):  # the captures mark direction
            line = line[3:]
        if not line.strip() or line.startswith(b"#") or len(line) > 4096:
            continue
        try:
            v = json.loads(line)
            kind = (v.get("type"), v.get("subtype"), (v.get("event") or {}).get("type") if isinstance(v.get("event"), dict) else None,
                    (v.get("request") or {}).get("subtype") if isinstance(v.get("request"), dict) else None)
        except Exception:
            kind = ("malformed", line[:20])
        if kind in seen:
            continue
        seen.add(kind)
        lines.append(line)
for line in lines:
    put("ndjson", b"\x00" + line + b"\n")
for i in range(0, min(len(lines), 24), 4):
    put("ndjson", bytes([i]) + b"\r\n\n".join(lines[i:i + 4]) + b"\r\n")
put("ndjson", b"\x85" + b"{\"type\":\"user\"}\n\n   \n\xff\xfe\n" + b"x" * 80 + b"\r\n{}")

def parses(line):
    try:
        return isinstance(json.loads(line), dict)
    except Exception:
        return False


good = [l for l in lines if parses(l)]

# sse: parameter byte, then an event stream as the relay writes it.
env = {"event_id": "evt_1", "sequence_num": 1, "source": "worker", "created_at": "2026-01-01T00:00:00Z",
       "payload": json.loads(good[0]) if good else {"type": "system"}}
sse = [
    "retry: 1000\n\n: keepalive\n\n",
    "id: 1\nevent: client_event\ndata: " + json.dumps(env) + "\n\n",
    "\ufeffid: 2\r\nevent: client_event\r\ndata: {\"event_id\":\"e2\",\r\ndata: \"payload\":{\"type\":\"result\"}}\r\n\r\n",
    "event: ephemeral_event\ndata: {\"payload\":{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\"}}}\n\n",
    "event: delivery\ndata: {\"event_id\":\"e1\",\"status\":\"processed\"}\n\nevent: error\ndata: {\"error\":{\"type\":\"gone\"}}\n\n",
    "id: 3\x00\ndata\ndata:\n\n:comment\rretry: x\r\r",
]
for i, s in enumerate(sse):
    put("sse", bytes([i * 3]) + s.encode())
put("sse", b"\x88" + b"data: " + b"y" * 70 + b"\n\n")

# envelope: ws text frames and REST envelopes.
for p in [env,
          {"event": "client_event", "id": 7, "data": env},
          {"event": "client_event", "id": "8", "data": {"payload": {"type": "user", "uuid": "u"}}},
          {"event": "ephemeral_event", "data": {"payload": {"type": "stream_event"}}},
          {"event": "delivery", "data": {"event_id": "e", "status": "received"}},
          {"event": "error", "data": {"error": {"type": "not_found", "message": "x"}}},
          {"sequence_num": 0, "payload": {"type": 3}}]:
    put("envelope", json.dumps(p))
for line in good[:12]:
    put("envelope", json.dumps({"event": "client_event", "id": 5, "data": {"sequence_num": 5, "source": "worker", "payload": json.loads(line)}}))

# partial_json: tool inputs cut mid-way.
for s in ['{"command": "touch cre', '{"command"', '{"a": [1, 2', '{"file_path":"/tmp/x","content":"line\\n\\u00e9\\ud83d',
          '[{"a":{"b":[true, fal', '{"k": "v", "n": -1.5e', '"str', '{"a":"\\', '  {"old_string": "x", "new_string": "y"}']:
    put("partial_json", s)

# markdown: what the model writes.
for s in ["# Title\n\nSome *emphasis*, **strong**, `code` and a [link](https://example.com \"t\").\n",
          "- [ ] task\n- [x] done\n\n1. one\n2. two\n",
          "```rust\nfn main() {}\n```\n\n> quote\n\n---\n",
          "| a | b |\n|---|:-:|\n| 1 | 2 |\n",
          "[x](javascript:alert(1)) [y](JAVA\tSCRIPT:1) <script>alert(1)</script> ![img](data:x)\n",
          "Footnote[^1].\n\n[^1]: The note.\n\n[ref]: http://a\n[ref]\n",
          "<div>\nraw html\n</div>\n~~strike~~ <https://auto.link> <mailto:a@b.c>\n"]:
    put("markdown", s)

# relay_http: requests separated by 0x1E.
T = "fuzz-controller-token-0123456789abcdef"
H = "Host: 127.0.0.1:8787\nAuthorization: Bearer " + T + "\n"
reqs = [
    "GET /healthz\nHost: localhost:8787\n\n",
    "GET /v1/me\n" + H + "\n",
    "GET /v1/code/sessions\n" + H + "\n",
    "POST /v1/code/sessions\n" + H + "Content-Type: application/json\n\n{\"cwd\":\"/tmp\",\"model\":\"claude-x\",\"permission_mode\":\"plan\",\"title\":\"t\"}",
    "GET /v1/code/sessions/cse_fuzz\n" + H + "\n",
    "GET /v1/code/sessions/cse_fuzz/events?after=1&limit=2\n" + H + "\n",
    "GET /v1/code/sessions/cse_fuzz/events/stream\n" + H + "Last-Event-ID: 1\nAccept: text/event-stream\n\n",
    "POST /v1/code/sessions/cse_fuzz/events\n" + H + "Content-Type: application/json\n\n"
    + json.dumps({"events": [{"type": "user", "uuid": "00000000-0000-4000-8000-000000000009", "message": {"role": "user", "content": "hi"}}]}),
    "POST /v1/code/sessions/cse_fuzz/events\n" + H + "Content-Type: application/json\n\n"
    + json.dumps({"events": [{"type": "control_response", "response": {"subtype": "success", "request_id": "r1", "response": {"behavior": "allow"}}}]}),
    "POST /v1/code/sessions/cse_fuzz/archive\n" + H + "Content-Type: application/json\n\n{\"discard_worktree\":true}",
    "DELETE /v1/code/sessions/cse_fuzz\n" + H + "\n",
    "POST /v1/auth/login\nHost: 127.0.0.1:8787\nOrigin: http://127.0.0.1:8787\nContent-Type: application/json\n\n{\"token\":\"" + T + "\"}",
    "POST /v1/observer-tokens\n" + H + "Content-Type: application/json\n\n{\"session_ids\":[\"cse_fuzz\"],\"label\":\"phone\"}",
    "GET /v1/code/sessions/cse_fuzz/ws\n" + H + "Upgrade: websocket\nConnection: upgrade\nSec-WebSocket-Version: 13\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\n\n",
    "GET /v1/push/vapid-public-key\n" + H + "\n",
    "OPTIONS /v1/code/sessions\nHost: 127.0.0.1:8787\nOrigin: http://evil.example\nAccess-Control-Request-Method: POST\n\n",
    "GET /index.html\nHost: 127.0.0.1:8787\nAccept-Encoding: br, gzip\n\n",
]
for r in reqs:
    put("relay_http", r)
put("relay_http", "\x1e".join(reqs[1:5]))
put("relay_http", "\x1e".join([reqs[7], reqs[5], reqs[8], reqs[9]]))
