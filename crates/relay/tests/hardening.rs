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
