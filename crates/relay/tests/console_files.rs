//! The console's files as the relay serves them: the SPA fallback, compression, a rebuild after
//! a restart (the `bridge-relay` binary on 127.0.0.1:0).

use crate::common::*;

/// The response's `Content-Type`.
fn content_type(r: &reqwest::Response) -> &str {
    r.headers()["content-type"].to_str().unwrap()
}

#[tokio::test]
async fn static_console_with_spa_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let stat = console_dir(dir.path(), "dist", "<!doctype html><title>console</title>");
    std::fs::write(stat.join("app_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()).static_dir(&stat));
    let c = http();
    let r = c.get(relay.url("/")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.text().await.unwrap().contains("console"));
    let r = c.get(relay.url("/s/cse_whatever")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(content_type(&r).starts_with("text/html"));
    let r = c.get(relay.url("/app_bg.wasm")).send().await.unwrap();
    assert_eq!(r.headers()["content-type"], "application/wasm");
    let r = c
        .get(relay.url("/v1/not-an-endpoint"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert!(content_type(&r).starts_with("application/json"));
}

#[tokio::test]
async fn console_files_go_out_compressed_and_a_rebuild_is_served_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let stat = console_dir(dir.path(), "dist", "<!doctype html><title>console</title>");
    let wasm = wasm_like();
    std::fs::write(stat.join("app_bg.wasm"), &wasm).unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()).static_dir(&stat));
    let url = relay.url("/app_bg.wasm");
    let get = |enc: &'static str| fetch_encoded(&url, enc);
    // The copies are made at startup, off the request path.
    let r = until_compressed(&url, "gzip, deflate, br").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/wasm");
    assert_eq!(r.headers()["vary"], "accept-encoding");
    assert_eq!(r.headers()["cache-control"], "no-cache");
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    let sent = r.headers()["content-length"]
        .to_str()
        .unwrap()
        .parse::<usize>()
        .unwrap();
    assert!(sent < wasm.len() / 4, "{sent} of {} bytes", wasm.len());
    assert_eq!(decoded(r).await, (Some("br".into()), wasm.clone()));
    // gzip when Brotli is not accepted; the file as is when nothing is.
    assert_eq!(
        decoded(get("gzip").await).await,
        (Some("gzip".into()), wasm.clone())
    );
    assert_eq!(
        decoded(get("br;q=0, gzip").await).await.0.as_deref(),
        Some("gzip")
    );
    assert_eq!(decoded(get("").await).await, (None, wasm.clone()));
    // Revalidation is a 304.
    let r = revalidated(&url, &etag).await;
    assert!(r.bytes().await.unwrap().is_empty());
    // The relay serves the console it read at start: a file rebuilt under it changes nothing
    // until the relay starts again (an upgrade), then the new build goes out, compressed.
    let rebuilt: Vec<u8> = (0..70_000u32)
        .flat_map(|i| (i % 13).to_le_bytes())
        .collect();
    std::fs::write(stat.join("app_bg.wasm"), &rebuilt).unwrap();
    let (_, body) = decoded(get("br").await).await;
    assert_eq!(
        body, wasm,
        "the copy read at start, not the file changed under it"
    );
    let data2 = tempfile::tempdir().unwrap();
    let again = RelayProc::start(Opts::demo(data2.path()).static_dir(&stat));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let r = fetch_encoded(&again.url("/app_bg.wasm"), "br").await;
        let (coding, body) = decoded(r).await;
        assert_eq!(body, rebuilt, "the new build after a restart");
        if coding.is_some() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the new file is never compressed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // Small files and the SPA fallback are served as they are.
    let r = fetch_encoded(&relay.url("/s/cse_x"), "br").await;
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("content-encoding").is_none());
    assert!(r.text().await.unwrap().contains("console"));
}
