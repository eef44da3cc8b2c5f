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
    let stat = console_dir(dir.path(), "dist", "<!doctype html><title>console</title>");
    std::fs::create_dir_all(stat.join(HASHED_DIR)).unwrap();
    let wasm = wasm_like();
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
    let relay = RelayProc::start(Opts::demo(dir.path()).static_dir(&stat));
    let c = http();
    let wasm_url = relay.url(&format!("/{HASHED_DIR}/bridge-console_bg.wasm"));

    // The compressed copy (made at startup) and the file as is both say immutable.
    let r = until_compressed(&wasm_url, "br").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], IMMUTABLE);
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    let r = revalidated(&wasm_url, &etag).await;
    assert_eq!(r.headers()["cache-control"], IMMUTABLE);
    let r = fetch_encoded(&wasm_url, "identity").await;
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
            let r = fetch_encoded(&relay.url(path), enc).await;
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

/// Issue 25, item 2: `cd some-repo && bridge-relay` in a repository that commits `dist/index.html`
/// must not serve that page (it would run in the relay's origin: the login secret, the API, its own
/// service worker). This test binary carries no built-in console, so the relay serves its
/// placeholder page — never the start directory's.
#[tokio::test]
async fn a_dist_in_the_start_directory_is_never_served() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("dist")).unwrap();
    std::fs::write(
        repo.join("dist/index.html"),
        "<!doctype html><script>PLANTED()</script>",
    )
    .unwrap();
    std::fs::write(repo.join("dist/sw.js"), "PLANTED_WORKER()").unwrap();
    let data = dir.path().join("data");
    let relay = RelayProc::start(Opts {
        start_dir: Some(&repo),
        ..Opts::demo(&data)
    });
    for path in ["/", "/index.html", "/sw.js", "/s/cse_x"] {
        let body = relay.get_text(path).await;
        assert!(
            !body.contains("PLANTED"),
            "{path} served the start directory's dist/: {body}"
        );
    }
    let page = relay.get_text("/").await;
    assert!(page.contains("no console build was found"), "{page}");
}

/// A `--static-dir` inside the sessions' working directory is refused at start, with a message
/// that names it; the relay does not start.
#[test]
fn a_static_dir_inside_the_session_cwd_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dist = console_dir(dir.path(), "dist", "<html>");
    let (dist, cwd) = (dist.display().to_string(), dir.path().display().to_string());
    let args = [
        "--bind",
        "127.0.0.1:0",
        "--static-dir",
        &dist,
        "--cwd",
        &cwd,
    ];
    let out = refused_start(&dir.path().join("data"), &args, Some(TOKEN));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refusing to serve the console"), "{err}");
}

/// The console is read once, at start: a file changed or added in the directory afterwards (an
/// agent writing there, say) is never served.
#[tokio::test]
async fn the_console_is_the_copy_read_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let stat = console_dir(
        dir.path(),
        "static",
        "<!doctype html><title>ORIGINAL</title>",
    );
    let relay = RelayProc::start(Opts::demo(dir.path()).static_dir(&stat));
    let page = relay.get_text("/").await;
    assert!(page.contains("ORIGINAL"), "{page}");
    std::fs::write(
        stat.join("index.html"),
        "<!doctype html><title>REPLACED</title>",
    )
    .unwrap();
    std::fs::write(stat.join("added.js"), "ADDED()").unwrap();
    for path in ["/", "/index.html", "/added.js"] {
        let body = relay.get_text(path).await;
        assert!(
            body.contains("ORIGINAL") && !body.contains("REPLACED") && !body.contains("ADDED"),
            "{path}: {body}"
        );
    }
}

/// A file changed after the build wrote its compressed copies (`sw.js` edited, `sw.js.br` left
/// behind): the stale copies are not served, whatever encoding the browser accepts.
#[tokio::test]
async fn a_compressed_copy_older_than_its_file_is_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let stat = console_dir(dir.path(), "dist", "<!doctype html><title>console</title>");
    let old = "self.addEventListener('fetch',()=>{}); // old build\n".repeat(40);
    let mut br = Vec::new();
    brotli::BrotliCompress(&mut old.as_bytes(), &mut br, &Default::default()).unwrap();
    std::fs::write(stat.join("sw.js.br"), &br).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, old.as_bytes()).unwrap();
    std::fs::write(stat.join("sw.js.gz"), gz.finish().unwrap()).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let new = format!("{old}// e2e: a new build\n");
    std::fs::write(stat.join("sw.js"), &new).unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()).static_dir(&stat));
    for enc in ["br", "gzip", ""] {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (coding, text) = decoded(fetch_encoded(&relay.url("/sw.js"), enc).await).await;
            assert_eq!(
                String::from_utf8(text).unwrap(),
                new,
                "{enc}: never the stale copy"
            );
            if enc.is_empty() || coding.is_some() || Instant::now() > deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
