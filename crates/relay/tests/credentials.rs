//! Issue 13, "Credentials and sessions": the login cookie needs its login secret, revocation /
//! expiry / logout reach open streams, `--token-file`, one controller credential, every credential
//! listed and revocable, one-time login codes in the banner, observers see less.

use std::time::{Duration, Instant};

use crate::common::*;
use futures::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn ws(relay: &RelayProc, sid: &str, headers: &[(&'static str, &str)]) -> Ws {
    let url = format!("ws://{}/v1/code/sessions/{sid}/ws?envelope=1", relay.addr);
    let mut req = url.into_client_request().unwrap();
    for (k, v) in headers {
        req.headers_mut().insert(*k, v.parse().unwrap());
    }
    tokio_tungstenite::connect_async(req)
        .await
        .expect("ws connect")
        .0
}

/// Reads until the socket closes; the close code (None: closed without a code, or not within `d`).
async fn close_code(ws: &mut Ws, d: Duration) -> Option<u16> {
    let deadline = tokio::time::Instant::now() + d;
    loop {
        match tokio::time::timeout_at(deadline, ws.next()).await {
            Ok(Some(Ok(Message::Close(Some(f))))) => return Some(f.code.into()),
            Ok(Some(Ok(Message::Close(None)))) | Ok(None) | Ok(Some(Err(_))) | Err(_) => {
                return None;
            }
            Ok(Some(Ok(_))) => {}
        }
    }
}

async fn revoke(relay: &RelayProc, id: &str) -> u16 {
    http()
        .delete(relay.url(&format!("/v1/credentials/{id}")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_replayed_cookie_without_its_login_secret_is_refused() {
    let (_dir, relay, sid) = demo_session().await;
    let (cookie, secret, _) = login(&relay, TOKEN).await;
    let c = http();
    let me = |secret: Option<&str>| {
        let mut req = c.get(relay.url("/v1/me")).header("cookie", &cookie);
        if let Some(s) = secret {
            req = req.header("x-bridge-login", s);
        }
        async move { req.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(
        me(None).await,
        401,
        "the cookie alone (another local server replays it)"
    );
    assert_eq!(me(Some("brk_guess")).await, 401);
    assert_eq!(me(Some(&secret)).await, 200);
    // The SSE stream, the same.
    let stream = relay.url(&format!("/v1/code/sessions/{sid}/events/stream"));
    let r = c
        .get(&stream)
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    // CORS lets a configured origin send the header.
    // A WebSocket with the cookie gets nothing until the login secret: without it, 4401.
    let mut bare = ws(&relay, &sid, &[("cookie", &cookie)]).await;
    bare.send(Message::text(
        json!({"type":"user","message":{"role":"user","content":"x"}}).to_string(),
    ))
    .await
    .unwrap();
    assert_eq!(close_code(&mut bare, T).await, Some(4401));
    // Silent: closed within the auth timeout, nothing sent before.
    let mut silent = ws(&relay, &sid, &[("cookie", &cookie)]).await;
    let t0 = Instant::now();
    assert_eq!(close_code(&mut silent, T).await, Some(4401));
    assert!(t0.elapsed() < Duration::from_secs(8));
    // With the secret first: frames flow.
    let mut good = ws(&relay, &sid, &[("cookie", &cookie)]).await;
    good.send(Message::text(
        json!({"type":"auth","login_secret":secret}).to_string(),
    ))
    .await
    .unwrap();
    let first = tokio::time::timeout(T, good.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(matches!(first, Message::Text(_)), "{first:?}");
}

#[tokio::test]
async fn revocation_expiry_and_logout_end_open_streams_within_a_second() {
    let (_dir, relay, sid) = demo_session().await;
    let stream = relay.url(&format!("/v1/code/sessions/{sid}/events/stream"));

    // SSE, observer token revoked.
    let obs = relay.mint_observer(json!({})).await;
    let mut sse = Sse::connect(&stream, obs["token"].as_str().unwrap(), None).await;
    assert_eq!(sse.status, 200);
    assert_eq!(revoke(&relay, obs["id"].as_str().unwrap()).await, 204);
    sse.expect_end(Duration::from_millis(1000)).await;

    // SSE, observer token expiring.
    let obs = relay.mint_observer(json!({"expires_in_secs": 1})).await;
    let mut sse = Sse::connect(&stream, obs["token"].as_str().unwrap(), None).await;
    sse.expect_end(Duration::from_millis(2500)).await;

    // WebSocket, observer token revoked: 4401 within a second.
    let obs = relay.mint_observer(json!({})).await;
    let bearer = format!("Bearer {}", obs["token"].as_str().unwrap());
    let mut w = ws(&relay, &sid, &[("authorization", &bearer)]).await;
    assert_eq!(revoke(&relay, obs["id"].as_str().unwrap()).await, 204);
    let t0 = Instant::now();
    assert_eq!(close_code(&mut w, Duration::from_secs(3)).await, Some(4401));
    assert!(
        t0.elapsed() <= Duration::from_millis(1000),
        "{:?}",
        t0.elapsed()
    );

    // WebSocket of a login, logged out: 4401 within a second; writes refused at once.
    let (cookie, secret, _) = login(&relay, TOKEN).await;
    let mut w = ws(&relay, &sid, &[("cookie", &cookie)]).await;
    w.send(Message::text(
        json!({"type":"auth","login_secret":secret}).to_string(),
    ))
    .await
    .unwrap();
    let r = http()
        .post(relay.url("/v1/auth/logout"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    w.send(Message::text(
        json!({"type":"user","message":{"role":"user","content":"after logout"},"parent_tool_use_id":null,"session_id":""}).to_string(),
    ))
    .await
    .unwrap();
    let t0 = Instant::now();
    assert_eq!(close_code(&mut w, Duration::from_secs(3)).await, Some(4401));
    assert!(t0.elapsed() <= Duration::from_millis(1000));
    let log = relay.events(&sid, 0).await.to_string();
    assert!(
        !log.contains("after logout"),
        "a write after logout was accepted"
    );

    // SSE of a login whose device is revoked by id.
    let (cookie, secret, id) = login(&relay, TOKEN).await;
    let r = with_login(reqwest::Client::new().get(&stream), &cookie, &secret).await;
    assert_eq!(r.status(), 200);
    let mut body = r.bytes_stream();
    assert_eq!(revoke(&relay, &id).await, 204);
    let ended = tokio::time::timeout(Duration::from_millis(1000), async {
        while let Some(Ok(_)) = body.next().await {}
    })
    .await;
    assert!(
        ended.is_ok(),
        "the SSE stream of a revoked login stayed open"
    );
}

#[tokio::test]
async fn no_frame_reaches_a_revoked_observer_after_the_revocation_was_answered() {
    let (_dir, relay, sid) = demo_session().await;
    let stream = relay.url(&format!("/v1/code/sessions/{sid}/events/stream"));
    for round in 0..5 {
        let obs = relay.mint_observer(json!({})).await;
        let token = obs["token"].as_str().unwrap().to_owned();
        let mut sse = Sse::connect(&stream, &token, None).await;
        assert_eq!(sse.status, 200);
        let bearer = format!("Bearer {token}");
        let mut w = ws(&relay, &sid, &[("authorization", &bearer)]).await;
        // Let both streams catch up with the log.
        while sse.next(Duration::from_millis(300)).await.is_some() {}
        assert_eq!(revoke(&relay, obs["id"].as_str().unwrap()).await, 204);
        let marker = format!("posted after the revoke {round}");
        relay.say(&sid, &marker).await;
        let mut seen = Vec::new();
        while let Some(f) = sse.next(Duration::from_secs(2)).await {
            seen.push(f.data.to_string());
        }
        assert!(sse.ended, "the revoked observer's stream ended");
        assert!(
            !seen.iter().any(|d| d.contains(&marker)),
            "round {round}: a frame posted after the revocation reached the revoked observer: {seen:?}"
        );
        let mut ws_seen = Vec::new();
        let closed = tokio::time::timeout(Duration::from_secs(3), async {
            while let Some(m) = w.next().await {
                match m {
                    Ok(Message::Text(t)) => ws_seen.push(t.to_string()),
                    Ok(Message::Close(c)) => return c.map(|c| u16::from(c.code)),
                    Ok(_) => {}
                    Err(_) => return None,
                }
            }
            None
        })
        .await
        .expect("the revoked observer's socket closed");
        assert_eq!(closed, Some(4401));
        assert!(
            !ws_seen.iter().any(|d| d.contains(&marker)),
            "round {round}: the socket got a frame posted after the revocation"
        );
    }
}

#[tokio::test]
async fn credentials_are_listed_and_revocable_and_the_banner_has_a_one_time_code() {
    let (_dir, relay) = demo_relay(&["--login-code-ttl-secs", "600"]);
    // The banner never prints the permanent token; its code works once.
    assert!(
        relay.banner.iter().all(|l| !l.contains(TOKEN)),
        "{:?}",
        relay.banner
    );
    let code = relay.login_code();
    let (cookie, secret, login_id) = login(&relay, &code).await;
    let status = try_login(&relay, &code).await.0;
    assert_eq!(status, 401, "links are single-use");
    // Tests and scripts mint fresh codes with the controller token (not with a login).
    let r = relay.post_empty("/v1/auth/login-codes", TOKEN).await;
    assert_eq!(r.status(), 201);
    let fresh: Value = r.json().await.unwrap();
    assert!(has_text(&fresh["console_url"], "#login=brl_"));
    login(&relay, fresh["code"].as_str().unwrap()).await;
    let r = with_login(
        http().post(relay.url("/v1/auth/login-codes")),
        &cookie,
        &secret,
    )
    .await;
    assert_eq!(r.status(), 403);

    // Observer tokens expire in 24 h unless told otherwise.
    let obs = relay.mint_observer(json!({})).await;
    let exp = obs["expires_at"].as_i64().expect("a default expiry");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!(
        (now + 86_400 - 60..=now + 86_400 + 5).contains(&exp),
        "{obs}"
    );

    let list = get_json(&relay.url("/v1/credentials"), TOKEN).await;
    let text = list.to_string();
    let ids = strings_of(&list, "credentials", "id");
    assert!(ids.contains(&"controller") && ids.contains(&login_id.as_str()));
    assert!(ids.contains(&obs["id"].as_str().unwrap()));
    for secret_text in [TOKEN, &secret, obs["token"].as_str().unwrap(), &cookie] {
        assert!(!text.contains(secret_text), "a secret in the list: {text}");
    }
    // Observers may not list.
    let r = relay
        .get("/v1/credentials", obs["token"].as_str().unwrap())
        .await;
    assert_eq!(r.status(), 403);
    // Revoking a login logs that device out.
    assert_eq!(revoke(&relay, &login_id).await, 204);
    let r = with_login(http().get(relay.url("/v1/me")), &cookie, &secret).await;
    assert_eq!(r.status(), 401);
    assert_eq!(revoke(&relay, "lgn_nope").await, 404);
}

#[tokio::test]
async fn login_codes_expire() {
    let (_dir, relay) = demo_relay(&["--login-code-ttl-secs", "1"]);
    let code = relay.login_code();
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(try_login(&relay, &code).await.0, 401);
}

#[tokio::test]
async fn each_login_has_its_own_id_in_the_audit_log() {
    let (dir, relay, sid) = demo_session().await;
    let (cookie, secret, login_id) = login(&relay, TOKEN).await;
    let mut sse = relay.sse(&sid, None).await;
    let post = |payload: Value| {
        http()
            .post(relay.url(&format!("/v1/code/sessions/{sid}/events")))
            .header("cookie", &cookie)
            .header("x-bridge-login", &secret)
            .json(&json!({"session_id": sid, "events": [{"payload": payload}]}))
            .send()
    };
    assert_eq!(post(user("run ls")).await.unwrap().status(), 200);
    let frames = sse.until("can_use_tool", is_can_use_tool).await;
    let ask = &frames.last().unwrap().data["payload"];
    let rid = ask["request_id"].as_str().unwrap();
    let tid = ask["request"]["tool_use_id"].as_str().unwrap();
    let r = post(allow(rid, tid, ask["request"]["input"].clone()))
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let entry = last_audit_entry(dir.path());
    assert_eq!(entry["who"]["login_id"], login_id.as_str(), "{entry}");
}

#[tokio::test]
async fn token_file_is_the_way_and_short_or_readable_tokens_are_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    let token = "from-a-file-0123456789abcdef";
    std::fs::write(&file, format!("{token}\n")).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = |args: &[&str], env_token: Option<&str>| {
        let args = [&["--bind", "127.0.0.1:0"], args].concat();
        let out = refused_start(&dir.path().join("data"), &args, env_token);
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let file_arg = file.display().to_string();
    let err = run(&["--token-file", &file_arg], None);
    assert!(err.contains("chmod 600"), "{err}");
    let err = run(&[], Some("short-token"));
    assert!(err.contains("at least 24"), "{err}");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let data2 = dir.path().join("data2");
    std::fs::create_dir_all(&data2).unwrap();
    let mut o = Opts::demo(&data2);
    o.token = None;
    let relay = RelayProc::start(o.arg("--token-file").arg(&file.display().to_string()));
    assert!(relay.banner.iter().all(|l| !l.contains(token)));
    let r = relay.get("/v1/me", token).await;
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn observers_do_not_see_the_account_pid_or_environment_values() {
    let (dir, relay, sid) = demo_session().await;
    let deadline = Instant::now() + T;
    let detail = loop {
        let d = relay.session(&sid).await;
        if d["initialize"].is_object() || Instant::now() > deadline {
            break d;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let pid = detail["initialize"]["pid"].clone();
    assert!(pid.is_number(), "{detail}");
    let obs = relay.mint_observer(json!({})).await;
    let seen = get_json(
        &relay.url(&format!("/v1/code/sessions/{sid}")),
        obs["token"].as_str().unwrap(),
    )
    .await;
    assert_eq!(seen["initialize"]["pid"], "[redacted]", "{seen}");
    assert_eq!(seen["initialize"]["account"], "[redacted]", "{seen}");

    // Another client's initialize: its answer is durable; observers get it redacted in replays
    // (GET …/events, SSE, WebSocket), the controller in clear.
    let r = relay
        .post(&sid, TOKEN, control_request("init_2", "initialize"))
        .await;
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let obs_token = obs["token"].as_str().unwrap();
    let answered =
        |v: &Value| v.to_string().contains("init_2") && v.to_string().contains("\"pid\"");
    let deadline = Instant::now() + T;
    let full = loop {
        let log = relay.events(&sid, 0).await;
        if log["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["source"] == "worker" && answered(e))
            || Instant::now() > deadline
        {
            break log;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let pid_text = format!("\"pid\":{}", pid);
    assert!(full.to_string().contains(&pid_text), "{full}");
    let seen = get_json(
        &relay.url(&format!(
            "/v1/code/sessions/{sid}/events?after=0&limit=1000"
        )),
        obs_token,
    )
    .await
    .to_string();
    assert!(
        seen.contains("init_2") && !seen.contains(&pid_text),
        "{seen}"
    );
    assert!(seen.contains("\"pid\":\"[redacted]\""), "{seen}");
    let mut sse = Sse::connect(
        &relay.url(&format!("/v1/code/sessions/{sid}/events/stream")),
        obs_token,
        None,
    )
    .await;
    let frames = sse
        .until("the initialize answer", |f| {
            f.data["payload"]["response"]["request_id"] == "init_2"
        })
        .await;
    let last = frames.last().unwrap().data.to_string();
    assert!(
        !last.contains(&pid_text) && last.contains("[redacted]"),
        "{last}"
    );
    let bearer = format!("Bearer {obs_token}");
    let mut w = ws(&relay, &sid, &[("authorization", &bearer)]).await;
    let mut got = String::new();
    while !got.contains("init_2") {
        if let Message::Text(t) = tokio::time::timeout(T, w.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
        {
            got.push_str(t.as_str());
        }
    }
    assert!(!got.contains(&pid_text), "{got}");

    // Environment values never reach the log in clear.
    let r = relay
        .post(
            &sid,
            TOKEN,
            json!({"type":"update_environment_variables","variables":{"SOME_API_KEY":"sk-very-secret-value"}}),
        )
        .await;
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let log = relay.events(&sid, 0).await.to_string();
    assert!(log.contains("SOME_API_KEY"), "{log}");
    assert!(!log.contains("sk-very-secret-value"), "{log}");
    let db = std::fs::read(dir.path().join("relay.db")).unwrap_or_default();
    assert!(!db.windows(20).any(|w| w == b"sk-very-secret-value"));
}

#[tokio::test]
async fn agents_never_get_the_controller_token_in_their_environment() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let marks = dir.path().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let script = dir.path().join("agent.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nenv > \"$MARK_DIR/env.txt.tmp\"\nmv \"$MARK_DIR/env.txt.tmp\" \"$MARK_DIR/env.txt\"\n\
         cat > /dev/null\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let mut o = Opts::demo(&data);
    o.args = vec!["--claude".into(), script.display().to_string()];
    let relay = RelayProc::start(o.env("MARK_DIR", &marks.display().to_string()));
    relay.create_session().await;
    let path = marks.join("env.txt");
    let deadline = Instant::now() + T;
    while !path.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let env = std::fs::read_to_string(&path).unwrap();
    assert!(env.contains("MARK_DIR="), "the agent inherits the rest");
    assert!(!env.contains("BRIDGE_RELAY_TOKEN") && !env.contains(TOKEN));
}

#[tokio::test]
async fn the_login_link_is_not_printed_when_stdout_is_not_a_terminal() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()).env("BRIDGE_PRINT_LOGIN_URL", "0"));
    let banner = relay.banner.join("\n");
    assert!(!banner.contains("#login="), "{banner}");
    assert!(!banner.contains("brl_"), "{banner}");
    let file = dir.path().join("login-url");
    assert!(banner.contains(&file.display().to_string()), "{banner}");
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let url = std::fs::read_to_string(&file).unwrap();
    let code = url.trim().split("#login=").nth(1).expect("a login URL");
    let (status, _) = try_login(&relay, code).await;
    assert_eq!(status, 200, "the saved link logs in");
}
