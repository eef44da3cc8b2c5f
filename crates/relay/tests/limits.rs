//! Limits and resources (issue 13): replays bounded in bytes, small unauthenticated bodies and a
//! login rate limit, WebSocket message cap, session / stream / stdin-queue caps, a stderr reader that
//! survives any bytes, archived sessions that cost nothing until opened, retention and DELETE.
//! Each runs the real `bridge-relay` binary.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::*;
use bridge_relay::EventStore as _;
use bridge_relay::core::session::{SessionMeta, SessionState};
use bridge_relay::core::store::{Source, SqliteStore, StoredEvent};
use futures::StreamExt as _;
use serde_json::{Value, json};

fn status_kb(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap()
}

/// An ended session `id` in `<dir>/relay.db` with `events` tool results of `event_bytes` each.
fn write_session(store: &SqliteStore, id: &str, events: u64, event_bytes: usize, archived: bool) {
    let mut meta = SessionMeta::new(id.into(), "/tmp".into(), None, None, None);
    meta.state = SessionState::Ended;
    meta.archived = archived;
    store.save_session(&meta).unwrap();
    let filler = "x".repeat(event_bytes);
    for seq in 1..=events {
        let payload = json!({"type":"user","message":{"role":"user","content":[
            {"type":"tool_result","tool_use_id":format!("t{seq}"),"content":filler}]},
            "parent_tool_use_id":null,"session_id":id,"uuid":format!("u{seq}")});
        store
            .append(&StoredEvent {
                session_id: id.into(),
                seq,
                event_id: format!("e{seq}"),
                event_type: "user".into(),
                source: Source::Worker,
                created_at: "2026-01-01T00:00:00.000Z".into(),
                payload: payload.to_string(),
                client_uuid: None,
            })
            .unwrap();
    }
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn agent_opts<'a>(data: &'a Path, agent: &Path) -> Opts<'a> {
    let mut o = Opts::demo(data);
    o.args = vec!["--claude".into(), agent.display().to_string()];
    o
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn full_replays_hold_a_page_not_the_log() {
    const EVENTS: u64 = 40;
    const EVENT_BYTES: usize = 4 << 20;
    let dir = tempfile::tempdir().unwrap();
    {
        let store = SqliteStore::open(&dir.path().join("relay.db")).unwrap();
        write_session(&store, "cse_big", EVENTS, EVENT_BYTES, false);
    }
    let relay = RelayProc::start(Opts::demo(dir.path()));
    let idle_kb = status_kb(relay.pid(), "VmRSS:");
    let rest = |limit: u64| {
        let url = relay.url(&format!(
            "/v1/code/sessions/cse_big/events?after=0&limit={limit}"
        ));
        async move {
            let client = reqwest::Client::builder()
                .timeout(Duration::from_secs(300))
                .build()
                .unwrap();
            let r = client.get(url).bearer_auth(TOKEN).send().await.unwrap();
            assert_eq!(r.status(), 200);
            let mut body = r.bytes_stream();
            let (mut n, mut head, mut tail) = (0usize, Vec::new(), Vec::new());
            while let Some(chunk) = body.next().await {
                let chunk = chunk.unwrap();
                n += chunk.len();
                if head.len() < 16 {
                    head.extend_from_slice(&chunk[..chunk.len().min(16)]);
                }
                tail = chunk[chunk.len().saturating_sub(64)..].to_vec();
            }
            (n, head, String::from_utf8_lossy(&tail).into_owned())
        }
    };
    let sse = |_: usize| {
        let url = relay.url("/v1/code/sessions/cse_big/events/stream");
        async move {
            let mut s = Sse::connect(&url, TOKEN, None).await;
            let mut last = 0;
            while let Some(f) = s.next(Duration::from_secs(300)).await {
                last = f.id.unwrap();
            }
            last
        }
    };
    let (rests, sses) = futures::join!(
        futures::future::join_all((0..2).map(|_| rest(10_000))),
        futures::future::join_all((0..2).map(sse)),
    );
    for (n, head, tail) in rests {
        assert!(n > EVENTS as usize * EVENT_BYTES, "{n} bytes");
        assert!(head.starts_with(b"{\"events\":["));
        assert!(
            tail.ends_with(&format!(
                ",\"truncated\":false,\"last_sequence_num\":{EVENTS}}}"
            )),
            "{tail}"
        );
    }
    assert_eq!(sses, vec![EVENTS; 2], "every event replayed over SSE");
    let peak_kb = status_kb(relay.pid(), "VmHWM:");
    let log_kb = EVENTS * EVENT_BYTES as u64 / 1024;
    eprintln!("idle {idle_kb} kB, peak {peak_kb} kB, log {log_kb} kB");
    assert!(
        peak_kb < idle_kb + log_kb / 2,
        "4 full replays of a {log_kb} kB log took the relay from {idle_kb} kB to {peak_kb} kB"
    );
    // A short page is still one valid document.
    let page: Value = get_json(
        &relay.url("/v1/code/sessions/cse_big/events?after=3&limit=2"),
        TOKEN,
    )
    .await;
    let seqs: Vec<u64> = seqs_of(page["events"].as_array().unwrap());
    assert_eq!(seqs, vec![4, 5]);
    assert_eq!(page["last_sequence_num"], EVENTS);
}

#[tokio::test]
async fn a_stderr_full_of_garbage_does_not_kill_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    // Invalid UTF-8, then a 1 MB line, on stderr; then it answers every user message on stdout (and
    // writes to stderr again, which kills it with SIGPIPE if the relay stopped reading).
    let agent = script(
        dir.path(),
        "agent.sh",
        r#"printf 'bad \377\376 bytes\n' >&2
head -c 1048576 /dev/zero | tr '\0' x >&2
echo >&2
while IFS= read -r line; do
  printf 'still here \377\n' >&2
  case "$line" in
    *'"type":"user"'*) printf '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"pong"}]},"session_id":"s","uuid":"a"}\n' ;;
  esac
done
"#,
    );
    let relay = RelayProc::start(agent_opts(dir.path(), &agent));
    let sid = relay.create_session().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    for i in 0..2 {
        let r = relay.post(&sid, TOKEN, user(&format!("ping {i}"))).await;
        assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
        let deadline = Instant::now() + T;
        loop {
            let events = relay.events(&sid, 0).await;
            let pongs = events["events"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["payload"]["type"] == "assistant")
                .count();
            if pongs > i {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "no answer; session {}",
                relay.session(&sid).await
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    assert_ne!(relay.session(&sid).await["state"], "ended");
}

#[tokio::test]
async fn unauthenticated_bodies_are_tiny_and_logins_are_rate_limited() {
    let (_dir, relay) = demo_relay(&[]);
    let big = json!({"token": "x".repeat(5000)});
    // `big`, posted to `path` without credentials.
    let post_big = |path: &str| send(http().post(relay.url(path)).json(&big));
    let r = post_big("/v1/auth/login").await;
    assert_eq!(r.status(), 413, "{}", r.text().await.unwrap());
    // Any path, without credentials.
    let r = post_big("/v1/code/sessions").await;
    assert_eq!(r.status(), 413);
    // Good logins are not charged: a person (or a test suite) signing in often is never locked out.
    for i in 0..15 {
        let r = login_response(&relay, TOKEN).await;
        assert!(r.status().is_success(), "good login {i}: {}", r.status());
    }
    // 413s above were not login attempts: 10 fail, the 11th is refused unseen.
    for i in 0..10 {
        let r = login_response(&relay, &format!("guess-{i}")).await;
        assert_eq!(r.status(), 401, "attempt {i}");
    }
    let r = login_response(&relay, TOKEN).await;
    assert_eq!(r.status(), 429);
    let wait: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=6).contains(&wait), "Retry-After {wait}");
    let body: Value = r.json().await.unwrap();
    assert!(has_text(
        &body["error"]["message"],
        "too many login attempts"
    ));
}

mod ws {
    use super::*;
    use futures::SinkExt as _;
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

    async fn connect(
        relay: &RelayProc,
        sid: &str,
        token: Option<&str>,
    ) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>
    {
        let url = format!("ws://{}/v1/code/sessions/{sid}/ws?envelope=1", relay.addr);
        let mut req = url.into_client_request().unwrap();
        if let Some(t) = token {
            req.headers_mut()
                .insert("authorization", format!("Bearer {t}").parse().unwrap());
        }
        tokio_tungstenite::connect_async(req).await.unwrap().0
    }

    #[tokio::test]
    async fn websocket_messages_are_capped_at_max_body_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let relay = RelayProc::start(Opts::demo(dir.path()).arg("--max-body-bytes").arg("4096"));
        let sid = relay.create_session().await;
        let mut big = user(&"y".repeat(10_000));
        big["uuid"] = json!("too-big");
        let mut ws = connect(&relay, &sid, Some(TOKEN)).await;
        ws.send(Message::text(big.to_string())).await.unwrap();
        // The socket ends (a protocol error, no error frame), and nothing reached the log.
        let ended = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(m) = ws.next().await {
                match m {
                    Ok(Message::Close(_)) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await;
        assert!(ended.is_ok(), "the socket stayed open");
        let events = relay.events(&sid, 0).await;
        assert!(
            !events.to_string().contains("too-big"),
            "the oversized message was ingested"
        );
        // Before authentication too: the first message is not read whole.
        let mut anon = connect(&relay, &sid, None).await;
        let auth = json!({"type":"auth","credential":{"type":"oauth","token":"z".repeat(10_000)}});
        let _ = anon.send(Message::text(auth.to_string())).await;
        while let Some(m) = anon.next().await {
            if let Ok(Message::Close(Some(c))) = &m {
                assert_ne!(
                    u16::from(c.code),
                    1008,
                    "read whole and checked as a credential: {c:?}"
                );
            }
            if matches!(m, Ok(Message::Close(_)) | Err(_)) {
                break;
            }
        }
    }

    /// Before authenticating, a socket may send a few KB in all, whatever --max-body-bytes says
    /// (8 MiB by default: 64 waiting sockets could hold 512 MiB); once it has, large messages pass.
    #[tokio::test]
    async fn an_unauthenticated_socket_reads_a_few_kb_then_the_body_cap() {
        let dir = tempfile::tempdir().unwrap();
        let relay = RelayProc::start(Opts::demo(dir.path()));
        let sid = relay.create_session().await;
        // 100 KB: under the 8 MiB cap. Read whole and checked as a credential, it was refused
        // with 1008 ("authentication required"); it is now cut after a few KB instead.
        let mut anon = connect(&relay, &sid, None).await;
        let auth = json!({"type":"auth","credential":{"type":"oauth","token":"z".repeat(100_000)}});
        let _ = anon.send(Message::text(auth.to_string())).await;
        let mut closed_with = None;
        while let Some(m) = anon.next().await {
            match m {
                Ok(Message::Close(c)) => {
                    closed_with = c.map(|c| u16::from(c.code));
                    break;
                }
                Err(_) => break,
                Ok(_) => {}
            }
        }
        assert_ne!(
            closed_with,
            Some(1008),
            "read whole and checked as a credential"
        );
        // Authenticated by its first message: a 100 KB message then is read and ingested.
        let mut ws = connect(&relay, &sid, None).await;
        let auth = json!({"type":"auth","credential":{"type":"oauth","token":TOKEN}});
        ws.send(Message::text(auth.to_string())).await.unwrap();
        let mut big = user(&"b".repeat(100_000));
        big["uuid"] = json!("large-after-auth");
        ws.send(Message::text(big.to_string())).await.unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            if relay
                .events(&sid, 0)
                .await
                .to_string()
                .contains("large-after-auth")
            {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the 100 KB message sent after authenticating never reached the log"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

#[tokio::test]
async fn sessions_and_streams_per_principal_are_capped() {
    let (_dir, relay) = demo_relay(&[
        "--max-sessions",
        "2",
        "--max-streams-per-principal",
        "2",
        "--sse-keepalive-secs",
        "1",
    ]);
    let a = relay.create_session().await;
    let _b = relay.create_session().await;
    let create = || async { post_json(&relay, "/v1/code/sessions", TOKEN, json!({})).await };
    let r = create().await;
    assert_limited(r, "--max-sessions").await;
    // Archiving one stops its agent: room for another.
    assert_eq!(relay.archive(&a).await, 200);
    let deadline = Instant::now() + T;
    while create().await.status() != 201 {
        assert!(Instant::now() < deadline, "no room after archiving");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let s1 = relay.sse(&_b, None).await;
    let s2 = relay.sse(&_b, None).await;
    assert_eq!((s1.status, s2.status), (200, 200));
    let s3 = relay.sse(&_b, None).await;
    assert_eq!(s3.status, 429);
    drop(s1);
    let deadline = Instant::now() + T;
    let _s4 = loop {
        let s = relay.sse(&_b, None).await;
        if s.status == 200 {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the closed stream's place never freed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let r = relay
        .get(&format!("/v1/code/sessions/{_b}/events/stream"), TOKEN)
        .await;
    assert_limited(r, "--max-streams-per-principal").await;
}

#[tokio::test]
async fn a_full_stdin_queue_refuses_posts_whole() {
    let dir = tempfile::tempdir().unwrap();
    // Never reads its stdin (and ends by itself: the test kills the relay with SIGKILL).
    let agent = script(dir.path(), "deaf.sh", "exec sleep 30\n");
    let relay = RelayProc::start(
        agent_opts(dir.path(), &agent)
            .arg("--max-stdin-queue")
            .arg("2"),
    );
    let sid = relay.create_session().await;
    let mut refused = None;
    for i in 0..12 {
        let msg = user(&"z".repeat(40_000));
        let r = relay.post(&sid, TOKEN, msg.clone()).await;
        match r.status().as_u16() {
            200 => {}
            503 => {
                let body: Value = r.json().await.unwrap();
                refused = Some((i, msg["uuid"].clone(), body));
                break;
            }
            s => panic!("POST {i}: {s}"),
        }
    }
    let (i, uuid, body) = refused.expect("the queue never filled");
    assert!(i >= 2, "refused at message {i}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("--max-stdin-queue"), "{message}");
    let events = relay.events(&sid, 0).await;
    assert!(
        !events.to_string().contains(uuid.as_str().unwrap()),
        "the refused message was stored"
    );
}

#[tokio::test]
async fn archived_sessions_cost_no_memory_until_opened() {
    let empty = tempfile::tempdir().unwrap();
    let baseline_kb = {
        let relay = RelayProc::start(Opts::demo(empty.path()));
        tokio::time::sleep(Duration::from_millis(300)).await;
        status_kb(relay.pid(), "VmRSS:")
    };
    let dir = tempfile::tempdir().unwrap();
    {
        let store = SqliteStore::open(&dir.path().join("relay.db")).unwrap();
        for i in 0..400 {
            write_session(&store, &format!("cse_old{i:03}"), 2, 100, true);
        }
    }
    let relay = RelayProc::start(Opts::demo(dir.path()));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss_kb = status_kb(relay.pid(), "VmRSS:");
    eprintln!("empty relay {baseline_kb} kB, with 400 archived sessions {rss_kb} kB");
    assert!(
        rss_kb < baseline_kb + 24 * 1024,
        "400 archived sessions took the relay from {baseline_kb} kB to {rss_kb} kB"
    );
    // Opening one works as before.
    let events = relay.events("cse_old007", 0).await;
    assert_eq!(events["events"].as_array().unwrap().len(), 2);
    let mut s = relay.sse("cse_old007", None).await;
    assert_eq!(s.next(T).await.unwrap().id, Some(1));
}

#[tokio::test]
async fn retention_days_deletes_old_archived_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let ago = |days: i64| {
        (time::OffsetDateTime::now_utc() - time::Duration::days(days))
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap()
    };
    {
        let store = SqliteStore::open(&dir.path().join("relay.db")).unwrap();
        for (id, archived, days) in [
            ("cse_old_archived", true, 10),
            ("cse_new_archived", true, 1),
            ("cse_old_kept", false, 10),
        ] {
            write_session(&store, id, 3, 10, archived);
            let mut meta = store
                .load_sessions()
                .unwrap()
                .into_iter()
                .find(|m| m.id == id)
                .unwrap();
            meta.last_activity_at = ago(days);
            store.save_session(&meta).unwrap();
        }
    }
    let relay = RelayProc::start(Opts::demo(dir.path()).arg("--retention-days").arg("7"));
    let list = get_json(&relay.url("/v1/code/sessions?include_archived=1"), TOKEN).await;
    let mut ids = listed_ids(&list);
    ids.sort_unstable();
    assert_eq!(ids, vec!["cse_new_archived", "cse_old_kept"]);
    drop(relay);
    let store = SqliteStore::open(&dir.path().join("relay.db")).unwrap();
    assert!(
        store
            .read_after("cse_old_archived", 0, 10)
            .unwrap()
            .is_empty(),
        "events gone"
    );
    assert_eq!(store.bounds("cse_new_archived").unwrap(), (1, 3));
}

#[tokio::test]
async fn delete_removes_a_session_and_refuses_a_running_one() {
    let (dir, relay, sid) = demo_session().await;
    let delete = |query: &'static str, sid: String| {
        let url = relay.url(&format!("/v1/code/sessions/{sid}{query}"));
        async move { http().delete(url).bearer_auth(TOKEN).send().await.unwrap() }
    };
    let r = delete("", sid.clone()).await;
    assert_eq!(r.status(), 409);
    let body: Value = r.json().await.unwrap();
    assert!(has_text(&body["error"]["message"], "?force=1"), "{body}");
    assert_eq!(delete("?force=1", sid.clone()).await.status(), 204);
    let r = relay
        .get(&format!("/v1/code/sessions/{sid}/events"), TOKEN)
        .await;
    assert_eq!(r.status(), 404);
    // Archived first: deleted without force.
    let other = relay.create_session().await;
    assert_eq!(relay.archive(&other).await, 200);
    assert_eq!(delete("", other.clone()).await.status(), 204);
    let list = get_json(&relay.url("/v1/code/sessions?include_archived=1"), TOKEN).await;
    assert_eq!(list["sessions"], json!([]));
    drop(relay);
    let store = SqliteStore::open(&dir.path().join("relay.db")).unwrap();
    assert!(store.load_sessions().unwrap().is_empty());
    assert!(store.read_after(&other, 0, 10).unwrap().is_empty());
}

/// The console's largest message (a 5 MB image plus text, up to 7.5 MiB in all) fits the default
/// --max-body-bytes (8 MiB), reaches the agent, and the demo agent sees the image; over a lower cap
/// an image prompt is a 413 that names the flag.
#[tokio::test]
async fn a_prompt_with_a_5_mb_image_fits_the_default_body_cap() {
    let image = "A".repeat(5 * 1024 * 1024);
    let prompt = json!({"type": "user", "session_id": "", "parent_tool_use_id": null,
    "uuid": "5c0ffee0-0000-4000-8000-000000000005",
    "message": {"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}},
        {"type": "text", "text": "x".repeat(2 * 1024 * 1024)}
    ]}});
    let (_dir, relay, sid) = demo_session().await;
    let r = relay.post(&sid, TOKEN, prompt.clone()).await;
    assert!(r.status().is_success(), "{}", r.status());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let events = relay.events(&sid, 0).await;
        let streamed: String = events["events"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|e| {
                let p = &e["payload"];
                let mut texts: Vec<String> = p["message"]["content"]
                    .as_array()
                    .filter(|_| p["type"] == "assistant")
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b["text"].as_str().map(str::to_string))
                    .collect();
                texts.extend(p["event"]["delta"]["text"].as_str().map(str::to_string));
                texts
            })
            .collect();
        // 5 MiB of base64 is 3.75 MiB of image.
        if streamed.contains("I see an image (image/png, 3.8 MB).") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the agent never acknowledged the image: {:?}",
            events["events"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| format!("{} {}", e["payload"]["type"], e["payload"]["subtype"]))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let (_dir, small) = demo_relay(&["--max-body-bytes", "1048576"]);
    let sid = small.create_session().await;
    // (Just over the cap: a body much larger than the socket's buffers may be cut off unread.)
    let mut over = prompt;
    over["message"]["content"][0]["source"]["data"] = json!("A".repeat(1024 * 1024 + 4));
    over["message"]["content"][1]["text"] = json!("x");
    let r = small.post(&sid, TOKEN, over).await;
    assert_eq!(r.status(), 413);
    let v: Value = r.json().await.unwrap();
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("--max-body-bytes")),
        "{v}"
    );
}
