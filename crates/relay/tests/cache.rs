//! The console's cache headers over real HTTP: a content-hashed build file (`console-<hash>/…`,
//! `styles-<hash>.css`) is cached for good (`immutable`, a year), compressed or not; index.html,
//! sw.js, the manifest and anything unhashed are revalidated (`no-cache`); a missing hashed file (the
//! index.html fallback) is never cached under its name.


use std::time::{Duration, Instant};

use crate::common::*;

const HASHED_DIR: &str = "console-3b9f7f19a8d45931";
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

#[tokio::test]
async fn hashed_console_files_are_immutable_the_rest_revalidated() {
    let dir = tempfile::tempdir().unwrap();
    let stat = dir.path().join("dist");
    std::fs::create_dir_all(stat.join(HASHED_DIR)).unwrap();
    std::fs::write(
        stat.join("index.html"),
        "<!doctype html><title>console</title>",
    )
    .unwrap();
    let wasm: Vec<u8> = (0..60_000u32)
        .flat_map(|i| (i % 977).to_le_bytes())
        .collect();
    std::fs::write(stat.join(HASHED_DIR).join("bridge-console_bg.wasm"), &wasm).unwrap();
    // Under MIN_SIZE: never compressed, served by ServeDir.
    std::fs::write(stat.join(HASHED_DIR).join("__wasm_split.js"), "export {};").unwrap();
    std::fs::write(stat.join("styles-69db7f5e06f4d69c.css"), "body{}").unwrap();
    std::fs::write(
        stat.join("sw.js"),
        "self.addEventListener('fetch',()=>{});".repeat(40),
    )
    .unwrap();
    std::fs::write(stat.join("manifest.webmanifest"), "{}").unwrap();
    let relay = RelayProc::start(Opts {
        static_dir: Some(&stat),
        ..Opts::demo(dir.path())
    });
    let c = http();
    let wasm_url = relay.url(&format!("/{HASHED_DIR}/bridge-console_bg.wasm"));

    // The compressed copy (made at startup) and the file as is both say immutable.
    let deadline = Instant::now() + Duration::from_secs(30);
    let r = loop {
        let r = c
            .get(&wasm_url)
            .header("accept-encoding", "br")
            .send()
            .await
            .unwrap();
        if r.headers().get("content-encoding").is_some() {
            break r;
        }
        assert!(Instant::now() < deadline, "never compressed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], IMMUTABLE);
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    let r = c
        .get(&wasm_url)
        .header("accept-encoding", "br")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 304);
    assert_eq!(r.headers()["cache-control"], IMMUTABLE);
    let r = c
        .get(&wasm_url)
        .header("accept-encoding", "identity")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("content-encoding").is_none());
    assert_eq!(r.headers()["cache-control"], IMMUTABLE);
    assert_eq!(r.bytes().await.unwrap().len(), wasm.len());
    for small in [
        format!("/{HASHED_DIR}/__wasm_split.js"),
        "/styles-69db7f5e06f4d69c.css".to_owned(),
    ] {
        let r = c.get(relay.url(&small)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{small}");
        assert_eq!(r.headers()["cache-control"], IMMUTABLE, "{small}");
    }

    // What names the files is revalidated, compressed or not.
    for enc in ["br", "identity"] {
        for path in [
            "/",
            "/index.html",
            "/sw.js",
            "/manifest.webmanifest",
            "/s/cse_x",
        ] {
            let r = c
                .get(relay.url(path))
                .header("accept-encoding", enc)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200, "{path} ({enc})");
            assert_eq!(r.headers()["cache-control"], "no-cache", "{path} ({enc})");
        }
    }

    // A hashed name that does not exist gets index.html (the SPA fallback), never cached for good.
    let r = c
        .get(relay.url(&format!("/{HASHED_DIR}/split_gone.wasm")))
        .send()
        .await
        .unwrap();
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert_eq!(r.headers()["cache-control"], "no-cache");
}
