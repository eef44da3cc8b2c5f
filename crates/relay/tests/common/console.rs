//! The console's files as a test serves them (`--static-dir`) and reads them back: compressed
//! copies, revalidation, the body decoded by its `Content-Encoding`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{http, send};

/// `<root>/<name>`, made, with an `index.html` holding `index`: a console directory to serve.
pub fn console_dir(root: &Path, name: &str, index: &str) -> PathBuf {
    let stat = root.join(name);
    std::fs::create_dir_all(&stat).unwrap();
    std::fs::write(stat.join("index.html"), index).unwrap();
    stat
}

/// 240 kB of wasm-like bytes: large enough to be compressed, and compressible.
pub fn wasm_like() -> Vec<u8> {
    (0..60_000u32)
        .flat_map(|i| (i % 977).to_le_bytes())
        .collect()
}

/// `GET url` accepting the encodings `accept` (none named when empty).
pub async fn fetch_encoded(url: &str, accept: &str) -> reqwest::Response {
    let mut rq = http().get(url);
    if !accept.is_empty() {
        rq = rq.header("accept-encoding", accept);
    }
    send(rq).await
}

/// `GET url` (Brotli accepted) revalidating the copy tagged `etag`: the answer, a 304.
pub async fn revalidated(url: &str, etag: &str) -> reqwest::Response {
    let r = send(
        http()
            .get(url)
            .header("accept-encoding", "br")
            .header("if-none-match", etag),
    )
    .await;
    assert_eq!(r.status(), 304);
    r
}

/// `GET url` accepting `accept` until the answer is compressed (the copies are made at startup,
/// off the request path; within 30 s): that answer.
pub async fn until_compressed(url: &str, accept: &str) -> reqwest::Response {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = fetch_encoded(url, accept).await;
        if r.headers().get("content-encoding").is_some() {
            return r;
        }
        assert!(Instant::now() < deadline, "never compressed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The body of a static-file response, decoded by its `Content-Encoding`: (the coding, the bytes).
pub async fn decoded(r: reqwest::Response) -> (Option<String>, Vec<u8>) {
    let coding = r
        .headers()
        .get("content-encoding")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = r.bytes().await.unwrap().to_vec();
    let mut out = Vec::new();
    match coding.as_deref() {
        Some("br") => brotli::BrotliDecompress(&mut &body[..], &mut out).unwrap(),
        Some("gzip") => {
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&body[..]), &mut out)
                .unwrap();
        }
        None => out = body,
        Some(other) => panic!("unexpected coding {other}"),
    }
    (coding, out)
}
