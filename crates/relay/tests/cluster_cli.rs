//! The Claude Code CLI's own sessions across a scale-out cluster (issue 14): a gateway lists the
//! transcripts of every agents node's machine, each with its host, opens one through the node
//! that holds it, and resumes it there (the new relay session runs on that node, which the
//! registry names); a node that does not answer within 2 s is left out of the list and named.
//!
//! One NATS server, two `agents` nodes (`boxa`, `boxb`: each its own Claude config dir holding a
//! transcript, and its own working directory) and one `gateway` (`gw`), all `--demo`.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::cluster::{node, node_opts, signal};
use crate::common::nats::NatsServer;
use crate::common::transcripts::*;
use crate::common::*;
use serde_json::{Value, json};

/// The second machine's transcript: the fixture under another id and first prompt.
const ID_B: &str = "5b0c1f8e-3c55-4d0e-9a51-2f4b8d9e6a10";

/// An agents node named `name` whose machine holds transcript `id` (first prompt `prompt`).
fn agents_node(nats: &NatsServer, dir: &Path, name: &str, id: &str, prompt: &str) -> RelayProc {
    let (config, _, work_s) = plant(dir, id, prompt);
    RelayProc::start(
        node_opts(&nats.url, &dir.join("data"), "agents", name)
            .arg("--claude-config-dir")
            .arg(config.to_str().unwrap())
            .arg("--cwd")
            .arg(&work_s),
    )
}

async fn list(gw: &RelayProc, token: &str) -> Value {
    get_json(&gw.url("/v1/code/sessions"), token).await
}

fn cli_entries(list: &Value) -> Vec<Value> {
    list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["origin"] == "cli")
        .cloned()
        .collect()
}

#[tokio::test]
async fn a_gateway_lists_opens_and_resumes_the_cli_sessions_of_every_agents_node() {
    let nats = NatsServer::start();
    let dirs = tempdirs(3);
    let boxa = agents_node(
        &nats,
        dirs[0].path(),
        "boxa",
        FIXTURE_ID,
        "first prompt alpha",
    );
    let boxb = agents_node(&nats, dirs[1].path(), "boxb", ID_B, "first prompt on b");
    let gw = node(&nats, dirs[2].path(), "gateway", "gw");

    // Both machines' transcripts, each with its host (once the gateway has seen both heartbeats).
    let deadline = Instant::now() + T;
    let entries = loop {
        let l = list(&gw, TOKEN).await;
        let cli = cli_entries(&l);
        if cli.len() == 2 {
            assert!(l.get("missing_hosts").is_none(), "{l}");
            break cli;
        }
        assert!(
            Instant::now() < deadline,
            "the gateway did not list both nodes' CLI sessions: {l}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let by_id = |id: &str| entries.iter().find(|s| s["id"] == id).cloned().unwrap();
    let a = by_id(FIXTURE_ID);
    let b = by_id(ID_B);
    assert_eq!(
        (a["host"].as_str(), a["title"].as_str()),
        (Some("boxa"), Some("first prompt alpha"))
    );
    assert_eq!(
        (b["host"].as_str(), b["title"].as_str()),
        (Some("boxb"), Some("first prompt on b"))
    );
    assert!(
        b["cwd"]
            .as_str()
            .unwrap()
            .starts_with(&dirs[1].path().canonicalize().unwrap().display().to_string())
    );

    // Opened through the gateway: the frames come from the node that holds it.
    let detail = get_json(&gw.url(&format!("/v1/code/cli-sessions/{ID_B}")), TOKEN).await;
    assert_eq!(detail["host"], "boxb");
    assert_eq!(detail["id"], ID_B);
    let frames = detail["frames"].as_array().unwrap();
    assert!(
        frames
            .iter()
            .any(|f| f["isReplay"] == true && f["message"]["content"] == "first prompt on b")
    );
    assert!(frames.iter().all(|f| f["session_id"] == ID_B));
    // A valid id no machine holds: 404; a malformed one: 400, as on a single relay.
    for (id, status) in [
        ("00000000-0000-4000-8000-00000000dead", 404),
        ("not-a-session", 400),
    ] {
        let r = cli_session(&gw, id, TOKEN).await;
        assert_eq!(
            r.status().as_u16(),
            status,
            "{id}: {}",
            r.text().await.unwrap()
        );
    }

    // Rights as on a single relay: a plain observer token sees no CLI session; one minted with the
    // transcripts scope lists and reads, never resumes.
    let plain = gw.observer_token(json!({"session_id": null})).await;
    assert_eq!(cli_entries(&list(&gw, &plain).await).len(), 0);
    let r = cli_session(&gw, FIXTURE_ID, &plain).await;
    assert_eq!(r.status(), 403);
    let obs = gw
        .observer_token(json!({"session_id": null, "transcripts": true}))
        .await;
    assert_eq!(cli_entries(&list(&gw, &obs).await).len(), 2);
    let r = cli_session(&gw, FIXTURE_ID, &obs).await;
    assert_eq!(r.status(), 200);
    for action in ["resume", "fork"] {
        let r = cli_action(&gw, ID_B, action, &obs, json!({"message_uuid": BETA})).await;
        assert_eq!(r.status(), 403, "observer {action}");
    }

    // Resumed through the gateway: the session starts on boxb, the registry names boxb, its
    // history is there, and the transcript is no longer listed as the CLI's.
    let r = cli_action(&gw, ID_B, "resume", TOKEN, json!({})).await;
    assert_eq!(r.status(), 201);
    let resumed: Value = r.json().await.unwrap();
    assert_eq!(resumed["host"], "boxb", "{resumed}");
    assert_eq!(resumed["cli"]["resumed"], ID_B);
    let sid = resumed["session_id"].as_str().unwrap().to_owned();
    let l = list(&gw, TOKEN).await;
    let entry = find_session(&l, &sid);
    assert_eq!(
        (entry["host"].as_str(), entry["origin"].as_str()),
        (Some("boxb"), Some("relay"))
    );
    assert!(
        !l["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == ID_B),
        "listed twice: {l}"
    );
    assert_eq!(
        boxb.session(&sid).await["id"],
        sid.as_str(),
        "running on boxb"
    );
    let r = boxa.get(&format!("/v1/code/sessions/{sid}"), TOKEN).await;
    assert_eq!(r.status(), 404, "not started on boxa");
    // Its history (stored before it was hosted) reaches the gateway without a new event.
    let deadline = Instant::now() + T;
    loop {
        let page = gw.events(&sid, 0).await;
        if page["events"][0]["payload"]["message"]["content"] == "first prompt on b" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no history through the gateway: {page}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A session-scoped observer sees no CLI session, as on a single relay.
    let scoped = gw.observer_token(json!({ "session_id": sid })).await;
    assert!(cli_entries(&list(&gw, &scoped).await).is_empty());
    let r = cli_session(&gw, ID_B, &scoped).await;
    assert_eq!(r.status(), 403);
    // Resuming again through the gateway opens the same session.
    let again: Value = cli_action(&gw, ID_B, "resume", TOKEN, json!({}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (
            again["session_id"].as_str(),
            again["already_running"].as_bool()
        ),
        (Some(sid.as_str()), Some(true))
    );

    // A node that does not answer is left out after 2 s, and named.
    signal(boxb.pid(), "STOP");
    let started = Instant::now();
    let l = list(&gw, TOKEN).await;
    let took = started.elapsed();
    signal(boxb.pid(), "CONT");
    assert_eq!(l["missing_hosts"], json!(["boxb"]), "{l}");
    let cli = cli_entries(&l);
    assert_eq!(cli.len(), 1, "{l}");
    assert_eq!(cli[0]["host"], "boxa");
    assert!(took < Duration::from_secs(5), "the list waited {took:?}");
}
