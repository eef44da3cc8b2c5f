//! Hardening (issue 13, "Processes and durability") over real HTTP: the `bridge-relay` binary on
//! 127.0.0.1:0.

mod common;

use common::*;

/// Every page and API answer carries the security headers; the console's inline loader is allowed
/// by hash, never by `'unsafe-inline'`.
#[tokio::test]
async fn every_answer_carries_the_security_headers() {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    std::fs::create_dir_all(&www).unwrap();
    let loader = "\nimport init from '/app.js';\nawait init();\n";
    std::fs::write(
        www.join("index.html"),
        format!("<!doctype html><head><script type=\"module\">{loader}</script></head>"),
    )
    .unwrap();
    let mut o = Opts::demo(dir.path());
    o.static_dir = Some(&www);
    let relay = RelayProc::start(o);
    let c = http();
    for (path, status) in [
        ("/", 200),
        ("/s/cse_x", 200),
        ("/healthz", 200),
        ("/v1/me", 401),
        ("/v1/nope", 404),
    ] {
        let r = c.get(relay.url(path)).send().await.unwrap();
        assert_eq!(r.status(), status, "{path}");
        let h = r.headers();
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(h["referrer-policy"], "no-referrer", "{path}");
        let csp = h["content-security-policy"].to_str().unwrap();
        for d in [
            "default-src 'self'",
            "script-src 'self' 'wasm-unsafe-eval' 'sha256-",
            "connect-src 'self'",
            "frame-ancestors 'self'",
            "base-uri 'none'",
            "form-action 'self'",
            "object-src 'none'",
        ] {
            assert!(csp.contains(d), "{path}: {d} missing in {csp}");
        }
        let script_src = csp.split(';').find(|d| d.contains("script-src")).unwrap();
        assert!(!script_src.contains("unsafe-inline"), "{csp}");
    }
    let r = c
        .get(relay.url("/"))
        .header("Host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
}

async fn create(relay: &RelayProc, body: serde_json::Value) -> (u16, serde_json::Value) {
    let r = http()
        .post(relay.url("/v1/code/sessions"))
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or_default())
}

fn set_mode(mode: &str) -> serde_json::Value {
    serde_json::json!({"type": "control_request", "request_id": format!("r_{mode}"),
        "request": {"subtype": "set_permission_mode", "mode": mode}})
}

/// `permission_mode` and `model` are checked; `bypassPermissions` needs the relay's permission.
#[tokio::test]
async fn permission_mode_and_model_are_validated_and_bypass_needs_the_flag() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()));
    let (status, body) = create(&relay, json!({"permission_mode": "bypassPermissions"})).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--allow-bypass-permissions"),
        "{body}"
    );
    for bad in [
        json!({"permission_mode": "yolo"}),
        json!({"model": "--dangerously-skip-permissions"}),
        json!({"model": ""}),
        json!({"model": "x".repeat(201)}),
    ] {
        assert_eq!(create(&relay, bad.clone()).await.0, 400, "{bad}");
    }
    let (status, body) = create(
        &relay,
        json!({"permission_mode": "plan", "model": "opus[1m]"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let sid = body["session_id"].as_str().unwrap().to_owned();
    assert_eq!(
        relay
            .post(&sid, TOKEN, set_mode("bypassPermissions"))
            .await
            .status(),
        403
    );
    assert_eq!(
        relay.post(&sid, TOKEN, set_mode("nope")).await.status(),
        400
    );
    let set_model = json!({"type": "control_request", "request_id": "r_m",
        "request": {"subtype": "set_model", "model": "a b"}});
    assert_eq!(relay.post(&sid, TOKEN, set_model).await.status(), 400);
    assert_eq!(
        relay
            .post(&sid, TOKEN, set_mode("acceptEdits"))
            .await
            .status(),
        200
    );

    let dir2 = tempfile::tempdir().unwrap();
    let allowed = RelayProc::start(Opts::demo(dir2.path()).arg("--allow-bypass-permissions"));
    let (status, body) = create(&allowed, json!({"permission_mode": "bypassPermissions"})).await;
    assert_eq!(status, 201, "{body}");
    let sid = body["session_id"].as_str().unwrap().to_owned();
    assert_eq!(
        allowed
            .post(&sid, TOKEN, set_mode("bypassPermissions"))
            .await
            .status(),
        200
    );
}
