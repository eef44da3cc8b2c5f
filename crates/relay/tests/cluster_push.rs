//! Web Push across a cluster (issue 14): one NATS server, one `agents` node and two gateways, all
//! sending to a push service run by the test (`common/push_service.rs`: it checks each VAPID JWT and
//! decrypts each message). Every node serves the cluster's one VAPID key; a device subscribed through
//! gateway A is notified once, by the node running the session, of a prompt in a session made through
//! gateway B, and answers it through B; unsubscribing through B, or a 410 from the push service,
//! removes the device everywhere; with NATS down a subscription is refused with 503.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::cluster::{create_through, node_opts};
use crate::common::nats::NatsServer;
use crate::common::push_service::{PushService, Received, Reply};
use crate::common::*;
use serde_json::{Value, json};

fn start(nats: &NatsServer, dir: &Path, role: &str, name: &str, ps: &PushService) -> RelayProc {
    RelayProc::start(
        node_opts(&nats.url, dir, role, name)
            .arg("--push-endpoint-allow")
            .arg(&ps.allow_flag()),
    )
}

/// [`send_json`] with the controller token.
async fn send(
    relay: &RelayProc,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    send_json(relay, method, path, TOKEN, body).await
}

/// Subscribes `device` at `relay` (a new subscription: 201 expected): its id.
async fn subscribe(relay: &RelayProc, device: Value) -> String {
    let (s, v) = send(
        relay,
        reqwest::Method::POST,
        "/v1/push/subscriptions",
        Some(device),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    v["id"].as_str().unwrap().to_owned()
}

/// Sends `method path` (with `body`) to `node` until the answer's status is `want` (a 503 in
/// between is retried, for up to [`T`]): the last answer.
async fn send_until(
    node: &RelayProc,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
    want: u16,
) -> Value {
    let deadline = Instant::now() + T;
    loop {
        let (s, v) = send(node, method.clone(), path, body.clone()).await;
        if s == want {
            return v;
        }
        assert!(
            (s == 503 || want == 503) && Instant::now() < deadline,
            "{method} {path}: {s} {v}, waiting for {want}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Subscribes `device` at `node` until the answer's status is `want` (a 503 in between is
/// retried): the last answer.
async fn subscribe_until(node: &RelayProc, device: Value, want: u16) -> Value {
    let path = "/v1/push/subscriptions";
    send_until(node, reqwest::Method::POST, path, Some(device), want).await
}

/// The VAPID public key a node serves, once it has set up (503 until NATS answered).
async fn vapid_key(relay: &RelayProc) -> String {
    let path = "/v1/push/vapid-public-key";
    let v = send_until(relay, reqwest::Method::GET, path, None, 200).await;
    v["key"].as_str().unwrap().to_owned()
}

async fn subscription_ids(relay: &RelayProc) -> Vec<String> {
    let (s, v) = send(relay, reqwest::Method::GET, "/v1/push/subscriptions", None).await;
    assert_eq!(s, 200, "{v}");
    v["subscriptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Waits until `relay` lists exactly `ids`.
async fn lists(relay: &RelayProc, ids: &[&str]) {
    let deadline = Instant::now() + T;
    loop {
        let got = subscription_ids(relay).await;
        if got == ids {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{} lists {got:?}, not {ids:?}",
            relay.url("")
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn needs_you(ps: &PushService, rid: &str) -> usize {
    ps.received()
        .iter()
        .filter(|r| r.payload["type"] == "needs_you" && r.payload["request_id"] == rid)
        .count()
}

/// Posts `text` through `gw` and returns the permission prompt the demo agent asks.
async fn prompt(gw: &RelayProc, sid: &str, sse: &mut Sse, text: &str) -> Frame {
    let r = gw.post(sid, TOKEN, user(text)).await;
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    sse.until_one("the prompt", is_can_use_tool).await
}

fn rid(f: &Frame) -> String {
    f.payload()["request_id"].as_str().unwrap().to_owned()
}

/// [`prompt`], then waits for the `needs_you` push of that prompt: its request id and the push.
async fn pushed_prompt(
    ps: &PushService,
    gw: &RelayProc,
    sid: &str,
    sse: &mut Sse,
    text: &str,
) -> (String, Received) {
    let rid1 = rid(&prompt(gw, sid, sse, text).await);
    let needs = ps
        .wait_for("needs_you", |r| r.payload["request_id"] == rid1.as_str())
        .await;
    (rid1, needs)
}

#[tokio::test]
async fn a_device_subscribed_through_one_gateway_is_notified_once_and_answers_through_another() {
    let ps = PushService::start().await;
    let nats = NatsServer::start();
    let dirs = tempdirs(3);
    let agents = start(&nats, dirs[0].path(), "agents", "host1", &ps);
    let a = start(&nats, dirs[1].path(), "gateway", "gwa", &ps);
    let b = start(&nats, dirs[2].path(), "gateway", "gwb", &ps);

    // One key pair for the cluster, whichever node is asked.
    let key = vapid_key(&a).await;
    assert_eq!(vapid_key(&b).await, key);
    assert_eq!(vapid_key(&agents).await, key);

    let mut phone = ps.device("phone");
    phone["label"] = json!("Phone");
    let sub = subscribe(&a, phone.clone()).await;
    lists(&b, &[&sub]).await;
    // Registering the endpoint again through the other gateway finds it (same id, 200).
    let (s, v) = send(
        &b,
        reqwest::Method::POST,
        "/v1/push/subscriptions",
        Some(phone.clone()),
    )
    .await;
    assert_eq!((s, v["id"].as_str()), (200, Some(sub.as_str())), "{v}");

    // A prompt in a session made through B: exactly one push, signed with the cluster's key.
    let sid = create_through(&b).await;
    let mut sse = b.sse(&sid, None).await;
    assert_eq!(sse.status, 200);
    let (rid1, needs) = pushed_prompt(&ps, &b, &sid, &mut sse, "hello cluster push").await;
    assert_eq!(needs.device, "phone");
    assert_eq!(needs.payload["session_id"], sid.as_str());
    assert_eq!(needs.payload["tool_name"], "Bash");
    assert_eq!(needs.payload["answerable"], true);
    assert_eq!(needs.k, key, "signed with the cluster's VAPID key");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        needs_you(&ps, &rid1),
        1,
        "one notification, not one per node"
    );

    // At a gateway, answering a session another node runs still needs the controller: nothing for
    // a stranger, an observer of that very session is refused, and the prompt stays pending.
    let answer = json!({"session_id": sid, "request_id": rid1, "decision": "allow"});
    let r = http()
        .post(b.url("/v1/push/answer"))
        .json(&answer)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "{}", r.text().await.unwrap());
    let observer = a.observer_token(json!({ "session_id": sid })).await;
    let r = post_json(&b, "/v1/push/answer", &observer, answer).await;
    assert_eq!(r.status(), 403, "{}", r.text().await.unwrap());

    // Allow from the notification, through B (not the gateway it subscribed through), as the
    // service worker does: with the login made at A (its cookie and login secret).
    let (cookie, secret, _) = login(&a, TOKEN).await;
    let r = http()
        .post(b.url("/v1/push/answer"))
        .header("cookie", &cookie)
        .header("x-bridge-login", &secret)
        .json(&json!({"session_id": sid, "request_id": rid1, "decision": "allow", "subscription_id": sub}))
        .send()
        .await
        .unwrap();
    let (s, v) = (r.status().as_u16(), r.text().await.unwrap());
    assert_eq!(s, 200, "{v}");
    sse.until("the result", is_result).await;
    let resolved = ps
        .wait_for("resolved", |r| {
            r.payload["type"] == "resolved" && r.payload["request_id"] == rid1.as_str()
        })
        .await;
    // The host names the device the answer came from, as a single relay does.
    assert_eq!(
        resolved.payload["body"],
        "Bash permission: allowed from Phone"
    );
    // A second answer to it: the host's verdict (409), through the other gateway too.
    let (s, v) = send(
        &a,
        reqwest::Method::POST,
        "/v1/push/answer",
        Some(json!({"session_id": sid, "request_id": rid1, "decision": "deny"})),
    )
    .await;
    assert_eq!(s, 409, "{v}");
    // The delivery is recorded where every gateway sees it.
    let (_, v) = send(&a, reqwest::Method::GET, "/v1/push/subscriptions", None).await;
    assert!(v["subscriptions"][0]["last_success_at"].is_string(), "{v}");

    // Unsubscribed through B: gone everywhere, the next prompt sends nothing.
    let (s, v) = send(
        &b,
        reqwest::Method::DELETE,
        &format!("/v1/push/subscriptions/{sub}"),
        None,
    )
    .await;
    assert_eq!(s, 204, "{v}");
    lists(&a, &[]).await;
    lists(&agents, &[]).await;
    let before = ps.paths().len();
    let ask = prompt(&b, &sid, &mut sse, "after unsubscribing").await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(ps.paths().len(), before, "nothing sent to a removed device");
    let r = b
        .post(
            &sid,
            TOKEN,
            crate::common::cluster::answer_to(&ask, "echo done"),
        )
        .await;
    assert_eq!(r.status(), 200);
    sse.until("the result", is_result).await;

    // A device the push service says is gone (410) is removed from every node.
    let tablet = subscribe(&a, ps.device("tablet")).await;
    lists(&agents, &[&tablet]).await;
    ps.script([Reply::Status(410, None)]);
    let before = ps.paths().len();
    prompt(&b, &sid, &mut sse, "to a revoked device").await;
    ps.wait_requests(before + 1).await;
    lists(&a, &[]).await;
    lists(&b, &[]).await;
    lists(&agents, &[]).await;
}

/// NATS down: a subscription is refused with 503 (nothing is kept to be written later), while a
/// prompt of a running session still reaches the devices already subscribed; once NATS is back,
/// subscribing works again.
#[tokio::test]
async fn with_nats_down_a_subscription_is_refused_with_503_and_prompts_still_notify() {
    let ps = PushService::start().await;
    let mut nats = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let node = start(&nats, dir.path(), "all", "both", &ps);
    vapid_key(&node).await;
    subscribe(&node, ps.device("phone")).await;
    let sid = create_through(&node).await;
    let mut sse = node.sse(&sid, None).await;
    assert_eq!(sse.status, 200);
    nats.stop();
    let v = subscribe_until(&node, ps.device("tablet"), 503).await;
    assert_eq!(v["error"]["type"], "cluster_unavailable", "{v}");
    let (_, needs) = pushed_prompt(&ps, &node, &sid, &mut sse, "while NATS is down").await;
    assert_eq!(needs.device, "phone");
    nats.restart();
    subscribe_until(&node, ps.device("tablet"), 201).await;
}

/// A single relay moved into a cluster keeps its VAPID key and its devices: started with `--nats`
/// on its data dir, its key becomes the cluster's and its subscriptions move into the bucket
/// (served by a gateway too), and its prompts reach them.
#[tokio::test]
async fn a_single_relay_moved_into_a_cluster_keeps_its_key_and_its_devices() {
    let ps = PushService::start().await;
    let (dir, mut single) = demo_relay(&["--push-endpoint-allow", &ps.allow_flag()]);
    let key = vapid_key(&single).await;
    let sub = subscribe(&single, ps.device("phone")).await;
    single.kill();

    let nats = NatsServer::start();
    let node = start(&nats, dir.path(), "agents", "host1", &ps);
    let gw_dir = tempfile::tempdir().unwrap();
    let gw = start(&nats, gw_dir.path(), "gateway", "gwa", &ps);
    assert_eq!(vapid_key(&node).await, key, "the relay's own key");
    assert_eq!(vapid_key(&gw).await, key);
    lists(&gw, &[&sub]).await;
    let sid = create_through(&gw).await;
    let mut sse = gw.sse(&sid, None).await;
    let (_, needs) = pushed_prompt(&ps, &gw, &sid, &mut sse, "after the move").await;
    assert_eq!(
        (needs.device.as_str(), needs.k.as_str()),
        ("phone", key.as_str())
    );
}
