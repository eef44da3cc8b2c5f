//! Authentication, the Host/Origin guard, CORS and bad input over real HTTP (the `bridge-relay`
//! binary on 127.0.0.1:0).

use serde_json::{Value, json};

use crate::common::*;

#[tokio::test]
async fn auth_host_origin_and_cors() {
    let (dir, relay) = demo_relay(&["--allowed-origin", "http://console.example:8080"]);
    let c = http();
    let url = relay.url("/v1/code/sessions");
    // No token / bad token → 401 JSON.
    let r = c.get(&url).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "authentication_error");
    assert_eq!(
        c.get(&url)
            .bearer_auth("wrong")
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    // With a good token: the status for a Host and an Origin header (None: not sent).
    let status = |host: Option<String>, origin: Option<String>| {
        let mut req = c.get(&url).bearer_auth(TOKEN);
        if let Some(h) = host {
            req = req.header("host", h);
        }
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        async move { req.send().await.unwrap().status().as_u16() }
    };
    let some = |s: &str| Some(s.to_owned());
    // Bad Origin → 403, even with a good token; bad Host → 403.
    assert_eq!(status(None, some("http://evil.example")).await, 403);
    assert_eq!(status(some("evil.example"), None).await, 403);
    // Same origin and localhost:PORT are fine.
    let same = format!("http://{}", relay.addr);
    assert_eq!(status(None, Some(same.clone())).await, 200);
    let lh = format!("localhost:{}", relay.addr.port());
    assert_eq!(status(Some(lh), None).await, 200);
    // A local reverse proxy's portless loopback Host is fine; its Origin is not same-origin.
    assert_eq!(status(some("127.0.0.1"), None).await, 200);
    assert_eq!(
        status(some("127.0.0.1"), some("http://127.0.0.1")).await,
        403
    );
    // CORS only for the configured origin.
    let pre = c
        .request(reqwest::Method::OPTIONS, &url)
        .header("origin", "http://console.example:8080")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type",
        )
        .send()
        .await
        .unwrap();
    assert!(pre.status().is_success());
    assert_eq!(
        pre.headers()["access-control-allow-origin"],
        "http://console.example:8080"
    );
    assert!(
        pre.headers()["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .contains("last-event-id")
    );
    let r = c
        .get(&url)
        .bearer_auth(TOKEN)
        .header("origin", "http://console.example:8080")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["access-control-expose-headers"], "Retry-After");
    let r = c
        .get(&url)
        .bearer_auth(TOKEN)
        .header("origin", &same)
        .send()
        .await
        .unwrap();
    assert!(r.headers().get("access-control-allow-origin").is_none());

    // Login: the token becomes an HttpOnly SameSite=Strict cookie plus a login secret; neither
    // alone authenticates. The printed link carries a one-time code, never the token.
    assert!(!relay.console_url.contains(TOKEN), "{}", relay.console_url);
    let code = relay.login_code();
    let status = try_login(&relay, &code).await.0;
    assert_eq!(status, 200, "the printed code logs in once");
    assert_eq!(try_login(&relay, &code).await.0, 401, "and only once");
    assert_eq!(try_login(&relay, "nope").await.0, 401);
    let (set, secret) = token_login(c.post(relay.url("/v1/auth/login"))).await;
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    assert!(!set.contains(TOKEN), "the cookie is not the token");
    let cookie = set.split(';').next().unwrap().to_owned();
    assert!(!cookie.contains(&secret));
    // A replayed cookie (another local server received it) without the secret: 401.
    assert_eq!(
        c.get(relay.url("/v1/me"))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    let me: Value = with_login(c.get(relay.url("/v1/me")), &cookie, &secret)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(me["role"], "controller");
    let r = logout(&relay, &cookie).await;
    assert_eq!(r.status(), 204);
    assert_eq!(
        with_login(c.get(relay.url("/v1/me")), &cookie, &secret)
            .await
            .status(),
        401
    );

    // Tokens never reach the log, and only a hash is on disk.
    assert!(!relay.stderr_text().contains(TOKEN));
    let db = std::fs::read(dir.path().join("relay.db")).unwrap();
    assert!(!db.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes()));
}

#[tokio::test]
async fn bad_input_gets_json_4xx_and_changes_nothing() {
    let (_dir, relay) = demo_relay(&["--max-body-bytes", "4096"]);
    let sid = relay.create_session().await;
    let c = http();
    let send = |body: String| {
        c.post(relay.url(&format!("/v1/code/sessions/{sid}/events")))
            .bearer_auth(TOKEN)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let before = relay.session(&sid).await["last_sequence_num"].clone();
    let cases: Vec<(String, u16)> = vec![
        ("{not json".into(), 400),
        ("{\"events\": 3}".into(), 400),
        (json!({"events":[{"payload":{"no_type":1}}]}).to_string(), 400),
        (json!({"events":[{"payload":{"type":"user","message":"not an object"}}]}).to_string(), 400),
        (json!({"events":[{"payload":{"type":"control_response","response":{"subtype":"success","request_id":"never-asked"}}}]}).to_string(), 409),
        (json!({"events":[{"payload":user(&"x".repeat(5000))}]}).to_string(), 413),
    ];
    for (body, want) in cases {
        let r = send(body.clone()).await.unwrap();
        assert_eq!(r.status().as_u16(), want, "{body:.80}");
        let v: Value = r.json().await.unwrap();
        assert!(
            v["error"]["type"].is_string() && v["error"]["message"].is_string(),
            "{v}"
        );
    }
    assert_eq!(relay.session(&sid).await["last_sequence_num"], before);
    let r = relay.post("cse_nope", TOKEN, user("x")).await;
    assert_eq!(r.status(), 404);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["type"], "not_found_error");
    let r = c
        .get(relay.url("/v1/nope"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    // Retrying the same uuid is idempotent.
    let p = user("once");
    let a: Value = relay
        .post(&sid, TOKEN, p.clone())
        .await
        .json()
        .await
        .unwrap();
    let b: Value = relay.post(&sid, TOKEN, p).await.json().await.unwrap();
    assert_eq!(a, b);
}
