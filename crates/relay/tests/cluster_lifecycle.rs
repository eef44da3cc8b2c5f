//! Scale-out lifecycle (issue 14): what happens around the steady state — an agents node that
//! comes back after the cluster took it for dead, relays started before NATS, gateway mirrors
//! evicted and read again, shared credentials purged after they expire.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::cluster::*;
use crate::common::nats::NatsServer;
use crate::common::*;
use serde_json::{Value, json};

const LOST: &str = "host host1 stopped answering";

/// The demo agent behind a wrapper that appends its pid to `$MARK_DIR/agent.pids`.
fn pid_agent(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let script = dir.join("agent.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho $$ >> \"$MARK_DIR/agent.pids\"\n\
         exec \"$RELAY_BIN\" demo-agent --scenario default \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

fn agent_pids(marks: &Path) -> Vec<u32> {
    std::fs::read_to_string(marks.join("agent.pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn is_ended(f: &Frame) -> bool {
    is_durable(f)
        && f.ptype() == "system"
        && f.payload()["subtype"] == "session_state_changed"
        && f.payload()["state"] == "ended"
}

/// Polls `check` every 100 ms until it returns `Some`, or panics after `within`.
async fn eventually<T, F: std::future::Future<Output = Option<T>>>(
    what: &str,
    within: Duration,
    mut check: impl FnMut() -> F,
) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An agents node paused (SIGSTOP) longer than the gateways wait for its heartbeat, then resumed:
/// every gateway ends its session with the reason; the node, back, finds its session ended in the
/// log, stops the agent process, shows the session ended with the same reason, publishes nothing
/// more into that log (no fork: dense, one `ended` event, the last; `/healthz` ok, no forked log)
/// and says so once in its log; a new session placed on it works.
#[tokio::test]
async fn an_agents_node_taken_for_dead_ends_its_sessions_when_it_comes_back() {
    let nats = NatsServer::start();
    let dirs = tempdirs(3);
    let marks = tempfile::tempdir().unwrap();
    let script = pid_agent(marks.path());
    let mut opts = node_opts(&nats.url, dirs[0].path(), "agents", "host1");
    opts.args.retain(|a| a != "--demo");
    opts.args
        .extend(["--claude".into(), script.display().to_string()]);
    let agents = RelayProc::start(
        opts.env("MARK_DIR", &marks.path().display().to_string())
            .env("RELAY_BIN", env!("CARGO_BIN_EXE_bridge-relay")),
    );
    let a = node(&nats, dirs[1].path(), "gateway", "gwa");
    let b = node(&nats, dirs[2].path(), "gateway", "gwb");

    let sid = create_through(&a).await;
    let (mut on_a, ask) = a.ask(&sid, "then a pause").await;
    let agent = *agent_pids(marks.path()).first().expect("the agent's pid");
    assert!(alive(agent));

    signal(agents.pid(), "STOP");
    // Both gateways end the session while the node is paused.
    for gw in [&a, &b] {
        let s = eventually("listed as ended", T, || async {
            listed(gw, &sid).await.filter(|s| s["state"] == "ended")
        })
        .await;
        assert_eq!(s["exit"]["reason"], LOST, "{s}");
    }
    let ended = on_a.until("the ended event", is_ended).await;
    assert_eq!(ended.last().unwrap().payload()["reason"], LOST);
    signal(agents.pid(), "CONT");
    // Back: an answer sent straight to the node now meets an ended session, or is taken and its
    // events are refused by NATS (the log is closed): either way the node ends the session.
    let r = agents.post(&sid, TOKEN, answer_to(&ask, "echo late")).await;
    assert!(
        [200, 410].contains(&r.status().as_u16()),
        "{}",
        r.text().await.unwrap()
    );

    assert!(
        gone_within(agent, 15).await,
        "the node stopped the agent of the session the cluster ended"
    );
    let detail = eventually("the node shows the session ended", T, || async {
        let d = agents.session(&sid).await;
        (d["state"] == "ended").then_some(d)
    })
    .await;
    assert_eq!(detail["exit"]["reason"], LOST, "{detail}");
    let h = health_until(&agents, "the node is healthy again", |s, v| {
        s == 200 && v["nats"]["sessions_ended_while_away"] == 1
    })
    .await;
    assert_eq!(h["nats"]["forked_logs"], 0, "{h}");

    // The log on every gateway: dense, exactly one `ended` event, the last; nothing after it even
    // once the node has had time to publish what it appended since.
    tokio::time::sleep(Duration::from_secs(1)).await;
    for gw in [&a, &b] {
        let events = dense_log(gw, &sid).await;
        let ends: Vec<&Value> = events
            .iter()
            .filter(|e| e["payload"]["state"] == "ended")
            .collect();
        assert_eq!(ends.len(), 1, "one ended event: {events:?}");
        assert_eq!(
            events.last().unwrap()["payload"]["reason"],
            LOST,
            "the ended event is the last: {events:?}"
        );
        let s = listed(gw, &sid).await.unwrap();
        assert_eq!(
            (s["state"].as_str(), s["exit"]["reason"].as_str()),
            (Some("ended"), Some(LOST)),
            "{s}"
        );
        assert_eq!(gw.post(&sid, TOKEN, user("anyone?")).await.status(), 410);
    }
    let log = agents.stderr_text();
    assert_eq!(
        log.matches("the cluster ended this session while this node was out of touch")
            .count(),
        1,
        "said once"
    );
    assert!(!log.contains("did not write"), "no fork reported");

    // A new session placed on the node works.
    let (sid2, v) = create_through_with(&b, json!({})).await;
    assert_eq!(v["host"], "host1");
    let frames = demo_turn(&b, &sid2, "after the pause").await;
    let text = frames.iter().find_map(tool_result_text).unwrap();
    assert!(text.contains("after the pause"), "{text}");
    assert_eq!(agent_pids(marks.path()).len(), 2);
}

/// A gateway and an agents node started while NATS is down start anyway: `/healthz` says 503 with
/// `nats.connected: false`, the API answers 503; once NATS starts they set up their streams,
/// buckets and watches, and a session is created and streamed through the gateway. A URL that
/// cannot be parsed still stops the start at once with a clear error.
#[tokio::test]
async fn relays_started_before_nats_serve_once_it_arrives() {
    let mut nats = NatsServer::start();
    nats.stop();
    let dirs = tempdirs(2);
    let agents = node(&nats, dirs[0].path(), "agents", "host1");
    let gw = node(&nats, dirs[1].path(), "gateway", "gwa");
    for relay in [&agents, &gw] {
        let h = health_until(relay, "NATS down at start", |s, v| {
            s == 503 && v["nats"]["connected"] == false
        })
        .await;
        assert!(
            h["nats"]["problem"].as_str().unwrap().contains("NATS"),
            "{h}"
        );
    }
    let r = post_json(&gw, "/v1/code/sessions", TOKEN, json!({})).await;
    assert_eq!(r.status(), 503, "nothing is made while NATS is away");

    nats.restart();
    let started = Instant::now();
    for relay in [&agents, &gw] {
        health_until(relay, "NATS up", |s, v| s == 200 && v["ok"] == true).await;
    }
    let sid = create_through(&gw).await;
    let frames = demo_turn(&gw, &sid, "nats came late").await;
    assert!(
        frames
            .iter()
            .find_map(tool_result_text)
            .unwrap()
            .contains("nats came late")
    );
    eprintln!(
        "a turn through the gateway {:?} after NATS started",
        started.elapsed()
    );

    // Not a URL NATS can use: an error at once, naming the flag.
    for bad in ["http://127.0.0.1:4222", "nats://127.0.0.1:notaport"] {
        let dir = tempfile::tempdir().unwrap();
        let args = ["--bind", "127.0.0.1:0", "--nats", bad];
        let out = refused_start(dir.path(), &args, Some(TOKEN));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--nats"), "{bad}: {err}");
    }
}

/// A gateway keeps few mirrors with tiny limits (`BRIDGE_MIRROR_IDLE_SECS=1`,
/// `BRIDGE_MIRROR_MAX=2`): unused ones are dropped (counted in `/healthz`), one with an open stream
/// is kept and keeps following; a dropped one replays from 0 with the host's sequence numbers and
/// follows live again.
#[tokio::test]
async fn a_gateway_drops_unused_mirrors_and_reads_them_again() {
    let (nats, dirs, agents) = with_agents(2);
    let few = [("BRIDGE_MIRROR_IDLE_SECS", "1"), ("BRIDGE_MIRROR_MAX", "2")];
    let gw = node_with(&nats, dirs[1].path(), "gateway", "gwa", &few, &[]);
    let mut sids = Vec::new();
    for i in 0..4 {
        let sid = create_through(&gw).await;
        assert_eq!(
            gw.post(&sid, TOKEN, user(&format!("hello {i}")))
                .await
                .status(),
            200
        );
        // Read through the gateway: it mirrors the session.
        eventually("the echo on the gateway", T, || async {
            let page = gw.events(&sid, 0).await;
            (page["events"].as_array().unwrap().len() >= 2).then_some(())
        })
        .await;
        sids.push(sid);
    }
    // The first one stays open on a stream.
    let mut open = gw.sse(&sids[0], None).await;
    assert_eq!(open.status, 200);
    // Every unused mirror goes; the open stream's stays. (On a slow machine the first session's
    // mirror may have been dropped before its stream opened and read again by it: so wait for both
    // conditions rather than read the count at the third eviction.)
    health_until(&gw, "unused mirrors dropped, the open one kept", |_, v| {
        v["nats"]["mirrors_evicted"].as_u64().unwrap_or(0) >= 3
            && v["nats"]["mirrors"].as_u64().is_some_and(|n| n <= 1)
    })
    .await;

    // The open stream still follows the session.
    assert_eq!(
        gw.post(&sids[0], TOKEN, user("still here")).await.status(),
        200
    );
    open.until("live on the kept mirror", |f| {
        f.data.to_string().contains("still here")
    })
    .await;

    // A dropped one: the host's log from 0, same seqs, then live.
    let sid = &sids[3];
    let host_log = agents.events(sid, 0).await["events"]
        .as_array()
        .unwrap()
        .clone();
    let mut again = gw.sse(sid, None).await;
    assert_eq!(again.status, 200);
    let mut got = Vec::new();
    while got.len() < host_log.len() {
        let f = again.next(T).await.expect("the replay of a dropped mirror");
        if is_durable(&f) {
            got.push(f);
        }
    }
    let got: Vec<(u64, Value)> = durable(&got);
    let want: Vec<(u64, Value)> = host_log
        .iter()
        .map(|e| (e["sequence_num"].as_u64().unwrap(), e.clone()))
        .collect();
    assert_eq!(got, want, "replayed from 0 as the host has it");
    gw.say(sid, "live again").await;
    let live = again
        .until("live on the re-read mirror", |f| {
            f.data.to_string().contains("live again")
        })
        .await;
    assert_eq!(
        durable(&live)[0].0,
        host_log.len() as u64 + 1,
        "continues right after the replay"
    );
}

/// Shared credentials expire: an observer token minted with `expires_in_secs`, its login and a
/// login code are refused at every gateway once expired (also where they are still held), and the
/// sweep (`BRIDGE_CREDENTIALS_SWEEP_MS`) purges them from the bucket; a token that has not expired
/// stays.
#[tokio::test]
async fn expired_credentials_are_refused_everywhere_and_purged_from_the_bucket() {
    use sha2::Digest as _;
    let (nats, dirs, agents) = with_agents(3);
    let sweep = [("BRIDGE_CREDENTIALS_SWEEP_MS", "300")];
    let ttl = ["--login-code-ttl-secs", "2"];
    let a = node_with(&nats, dirs[1].path(), "gateway", "gwa", &sweep, &ttl);
    let b = node_with(&nats, dirs[2].path(), "gateway", "gwb", &sweep, &[]);
    let sid = create_through(&a).await;
    let detail = format!("/v1/code/sessions/{sid}");
    let status = async |relay: &RelayProc, auth: (&str, &str)| {
        let mut r = http().get(relay.url(&detail));
        r = if auth.1.is_empty() {
            r.bearer_auth(auth.0)
        } else {
            r.header("cookie", auth.0).header("x-bridge-login", auth.1)
        };
        r.send().await.unwrap().status().as_u16()
    };

    let short = a
        .mint_observer(json!({ "session_id": sid, "expires_in_secs": 2 }))
        .await;
    let short = short["token"].as_str().unwrap().to_owned();
    let long = a.mint_observer(json!({ "session_id": sid })).await;
    let long = long["token"].as_str().unwrap().to_owned();
    let (cookie, secret, _) = login(&a, &short).await;
    let code = mint_login_code(&a).await;
    let minted = Instant::now();
    assert_eq!(status(&b, (&short, "")).await, 200);
    assert_eq!(status(&b, (&cookie, &secret)).await, 200);

    let hex = |s: &str| {
        sha2::Sha256::digest(s.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let client = async_nats::connect(nats.url.as_str()).await.unwrap();
    let kv = async_nats::jetstream::new(client)
        .get_key_value("bridge_credentials")
        .await
        .unwrap();
    let keys = async || {
        use futures::StreamExt as _;
        let mut keys: Vec<String> = kv
            .keys()
            .await
            .unwrap()
            .filter_map(|k| async { k.ok() })
            .collect()
            .await;
        keys.sort();
        keys
    };
    let (tok, lgn, cod, keep) = (
        format!("tok.{}", hex(&short)),
        format!("lgn.{}", hex(cookie.split_once('=').unwrap().1)),
        format!("code.{}", hex(&code)),
        format!("tok.{}", hex(&long)),
    );
    let before = keys().await;
    for k in [&tok, &lgn, &cod, &keep] {
        assert!(before.contains(k), "{k} in the bucket: {before:?}");
    }

    // Expired: refused everywhere at once.
    tokio::time::sleep(Duration::from_millis(2100).saturating_sub(minted.elapsed())).await;
    for gw in [&a, &b] {
        assert_eq!(status(gw, (&short, "")).await, 401);
        assert_eq!(status(gw, (&cookie, &secret)).await, 401);
        assert_eq!(status(gw, (&long, "")).await, 200);
    }
    let expired = try_login(&b, &code).await.0;
    assert_eq!(expired, 401, "an expired login code");
    // Purged from the bucket; the one that has not expired stays.
    let after = eventually("expired credentials purged", T, || async {
        let k = keys().await;
        (![&tok, &lgn, &cod].iter().any(|x| k.contains(x))).then_some(k)
    })
    .await;
    assert!(after.contains(&keep), "{after:?}");
    assert_eq!(status(&b, (&long, "")).await, 200);
    drop(agents);
}
