//! The console's files, read once at start and served from memory.
//!
//! Where the console comes from is decided once (`main.rs`, before the relay starts): the copy built into
//! the binary, `--static-dir`, or a `dist/` beside the binary — never the directory the relay was
//! started in. Whatever it is, it is read whole at start ([`Console`]); a file changed or planted
//! afterwards is never served.
//!
//! The console is about 1 MB of wasm; sent as is it is the slowest thing a phone on a mobile network
//! does. Every text-like file has a Brotli (quality 11) and a gzip (level 9) copy — the build's own
//! (`scripts/build-console.sh` writes `NAME.br` and `NAME.gz`), else made on a background thread at
//! start — and a request that accepts either gets the smaller copy. Nothing is written to disk.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Component, Path};
use std::sync::{Arc, OnceLock};

use sha2::{Digest as _, Sha256};

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

/// Files smaller than this are sent as they are (compression would not pay for its headers).
const MIN_SIZE: u64 = 1024;

/// The media type of a compressible file, by extension; `None` for everything else (images, fonts).
fn media_type(path: &Path) -> Option<&'static str> {
    Some(match path.extension()?.to_str()? {
        "wasm" => "application/wasm",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "html" => "text/html; charset=utf-8",
        "svg" => "image/svg+xml",
        "json" | "map" => "application/json",
        "webmanifest" => "application/manifest+json",
        "txt" => "text/plain; charset=utf-8",
        _ => return None,
    })
}

/// Which encoding a request accepts best.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Brotli,
    Gzip,
}

impl Encoding {
    /// Its `Content-Encoding`.
    pub fn header(self) -> HeaderValue {
        HeaderValue::from_static(match self {
            Encoding::Brotli => "br",
            Encoding::Gzip => "gzip",
        })
    }
}

/// `br` if `Accept-Encoding` allows it, else `gzip`, else `None`. A coding with `q=0` is refused.
pub fn negotiate(headers: &HeaderMap) -> Option<Encoding> {
    match accepted(headers) {
        (true, _) => Some(Encoding::Brotli),
        (false, true) => Some(Encoding::Gzip),
        _ => None,
    }
}

/// Whether `Accept-Encoding` allows `br`, and `gzip`.
fn accepted(headers: &HeaderMap) -> (bool, bool) {
    let mut br = false;
    let mut gzip = false;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            if refused {
                continue;
            }
            match coding.as_str() {
                "br" => br = true,
                "gzip" | "x-gzip" => gzip = true,
                "*" => {
                    br = true;
                    gzip = true;
                }
                _ => {}
            }
        }
    }
    (br, gzip)
}

/// A console file held in memory: its bytes and, for text-like files, Brotli and gzip copies.
struct Asset {
    media_type: &'static str,
    raw: Bytes,
    /// Set once: from the build's `NAME.br` / `NAME.gz`, else made on a background thread at start.
    brotli: OnceLock<Bytes>,
    gzip: OnceLock<Bytes>,
    /// A strong validator: a digest of the bytes.
    tag: String,
}

impl Asset {
    fn new(path: &str, raw: Bytes, brotli: Option<Bytes>, gzip: Option<Bytes>) -> Self {
        let digest = Sha256::digest(&raw);
        let asset = Asset {
            media_type: media_type(Path::new(path)).unwrap_or_else(|| binary_type(path)),
            raw,
            brotli: OnceLock::new(),
            gzip: OnceLock::new(),
            tag: hex::encode(&digest[..8]),
        };
        if let Some(b) = brotli {
            let _ = asset.brotli.set(b);
        }
        if let Some(g) = gzip {
            let _ = asset.gzip.set(g);
        }
        asset
    }

    /// Whether copies should exist (and be made when the build did not ship them).
    fn compressible(&self, path: &str) -> bool {
        media_type(Path::new(path)).is_some() && self.raw.len() as u64 >= MIN_SIZE
    }
}

/// The media type of a file that is sent as it is (images, fonts, anything else).
fn binary_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "png" => "image/png",
        "ico" => "image/x-icon",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        _ => "application/octet-stream",
    }
}

/// One file the build put into the binary (see `build.rs`).
pub struct EmbeddedFile {
    pub path: &'static str,
    pub raw: &'static [u8],
    pub brotli: Option<&'static [u8]>,
    pub gzip: Option<&'static [u8]>,
}

mod embedded {
    use super::EmbeddedFile;
    include!(concat!(env!("OUT_DIR"), "/embedded_console.rs"));
}

/// The name of the console build inside this binary (`console-<hash>`), if it carries one.
pub fn embedded_build() -> Option<&'static str> {
    embedded::BUILD
}

/// Most files and bytes a console directory may hold (it is read whole into memory at start).
const MAX_FILES: usize = 4096;
const MAX_TOTAL: u64 = 256 * 1024 * 1024;

/// The console the relay serves: every file read once, at start — from the binary itself
/// ([`Console::embedded`]) or from a directory ([`Console::from_dir`]) — and served from memory.
/// Nothing is read from disk per request, so a file changed (or planted) after the start is
/// never served.
pub struct Console {
    files: HashMap<String, Arc<Asset>>,
    /// Where it came from, for the log and `--version`.
    pub origin: String,
}

impl Console {
    /// The console built into this binary, if any.
    pub fn embedded() -> Option<Arc<Self>> {
        let build = embedded::BUILD?;
        let files = embedded::FILES
            .iter()
            .map(|f| {
                let asset = Asset::new(
                    f.path,
                    Bytes::from_static(f.raw),
                    f.brotli.map(Bytes::from_static),
                    f.gzip.map(Bytes::from_static),
                );
                (f.path.to_owned(), Arc::new(asset))
            })
            .collect();
        let console = Arc::new(Console {
            files,
            origin: format!("built into the binary ({build})"),
        });
        console.compress_missing();
        Some(console)
    }

    /// Every file under `dir` (regular files only; symbolic links are not followed), read now. A
    /// file's `NAME.br` / `NAME.gz` beside it are taken as its compressed copies unless older than
    /// it; copies the directory lacks are made on a background thread (until then the file goes
    /// out as it is).
    pub fn from_dir(dir: &Path) -> std::io::Result<Arc<Self>> {
        let mut paths = Vec::new();
        collect(dir, "", 4, &mut paths)?;
        let mut total = 0u64;
        let mut files = HashMap::new();
        for rel in &paths {
            if rel.ends_with(".br") || rel.ends_with(".gz") {
                continue;
            }
            let raw = std::fs::read(dir.join(rel))?;
            total += raw.len() as u64;
            if total > MAX_TOTAL || files.len() >= MAX_FILES {
                return Err(std::io::Error::other(format!(
                    "{} holds more than {MAX_FILES} files or {} MB: not a console build",
                    dir.display(),
                    MAX_TOTAL >> 20
                )));
            }
            // A compressed copy older than the file is stale (the file was changed after the build
            // wrote it): not served; the file is compressed again instead.
            let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
            let original = modified(&dir.join(rel));
            let sibling = |ext: &str| {
                let name = format!("{rel}.{ext}");
                let fresh = paths.contains(&name)
                    && matches!((modified(&dir.join(&name)), original), (Some(c), Some(o)) if c >= o);
                fresh
                    .then(|| std::fs::read(dir.join(&name)).ok().map(Bytes::from))
                    .flatten()
            };
            let asset = Asset::new(rel, raw.into(), sibling("br"), sibling("gz"));
            files.insert(rel.clone(), Arc::new(asset));
        }
        let console = Arc::new(Console {
            files,
            origin: dir.display().to_string(),
        });
        console.compress_missing();
        Ok(console)
    }

    /// Whether it holds a page to serve.
    pub fn has_index(&self) -> bool {
        self.files.contains_key("index.html")
    }

    /// `index.html` as text.
    pub fn index_html(&self) -> Option<Arc<str>> {
        let asset = self.files.get("index.html")?;
        std::str::from_utf8(&asset.raw).ok().map(Arc::from)
    }

    /// Makes the compressed copies the source did not have, once, on a thread of its own.
    fn compress_missing(self: &Arc<Self>) {
        let todo: Vec<(String, Arc<Asset>)> = self
            .files
            .iter()
            .filter(|(path, a)| {
                a.compressible(path) && (a.brotli.get().is_none() || a.gzip.get().is_none())
            })
            .map(|(p, a)| (p.clone(), a.clone()))
            .collect();
        if todo.is_empty() {
            return;
        }
        let origin = self.origin.clone();
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let (mut raw, mut br) = (0u64, 0u64);
            for (_, asset) in todo {
                if asset.brotli.get().is_none()
                    && let Some(b) = brotli_bytes(&asset.raw)
                {
                    let _ = asset.brotli.set(b);
                }
                if asset.gzip.get().is_none()
                    && let Some(g) = gzip_bytes(&asset.raw)
                {
                    let _ = asset.gzip.set(g);
                }
                raw += asset.raw.len() as u64;
                br += asset.brotli.get().map_or(0, |b| b.len() as u64);
            }
            tracing::info!(
                bytes = raw,
                brotli = br,
                ms = started.elapsed().as_millis() as u64,
                origin,
                "console files compressed"
            );
        });
    }

    /// The response for a GET or HEAD of `uri_path`: the file, else `index.html` (the console's
    /// own routes, `/s/<id>`, and any unknown path), in the best encoding the request accepts.
    pub fn respond(&self, method: &Method, uri_path: &str, headers: &HeaderMap) -> Response {
        if method != Method::GET && method != Method::HEAD {
            return StatusCode::METHOD_NOT_ALLOWED.into_response();
        }
        let found = relative(uri_path).and_then(|rel| self.files.get(&rel).cloned());
        let (asset, cache) = match found {
            Some(a) => (a, cache_control(uri_path)),
            None => match self.files.get("index.html") {
                // Never cached under the name asked for: a hashed name must not keep this page.
                Some(a) => (a.clone(), HeaderValue::from_static("no-cache")),
                None => return StatusCode::NOT_FOUND.into_response(),
            },
        };
        let (br_ok, gzip_ok) = accepted(headers);
        let encoded = br_ok
            .then(|| asset.brotli.get())
            .flatten()
            .map(|b| (Encoding::Brotli, b.clone()))
            .or_else(|| {
                gzip_ok
                    .then(|| asset.gzip.get())
                    .flatten()
                    .map(|b| (Encoding::Gzip, b.clone()))
            });
        let coding = match encoded {
            Some((Encoding::Brotli, _)) => "br",
            Some((Encoding::Gzip, _)) => "gz",
            None => "id",
        };
        let etag = format!("\"{}-{coding}\"", asset.tag);
        let fresh = headers
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
        let body = encoded
            .as_ref()
            .map_or_else(|| asset.raw.clone(), |(_, b)| b.clone());
        let mut res = if fresh {
            let mut r = Response::new(Body::empty());
            *r.status_mut() = StatusCode::NOT_MODIFIED;
            r
        } else if method == Method::HEAD {
            Response::new(Body::empty())
        } else {
            Response::new(Body::from(body.clone()))
        };
        let h = res.headers_mut();
        // A content-hashed file never changes under its name; everything else (index.html names
        // the files, sw.js, the manifest) is revalidated on every load (a 304 when unchanged), so a
        // new console never mixes with cached parts of the old one.
        h.insert(header::CACHE_CONTROL, cache);
        if let Ok(v) = HeaderValue::from_str(&etag) {
            h.insert(header::ETAG, v);
        }
        h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        if fresh {
            return res;
        }
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.media_type),
        );
        if let Some((enc, _)) = &encoded {
            h.insert(header::CONTENT_ENCODING, enc.header());
        }
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
        res
    }
}

/// `Cache-Control` of the hashed console files: a year, never revalidated.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// Whether `uri_path` names a content-hashed build file: inside the split build's `console-<hash>/`
/// directory, or a file whose name carries Trunk's or the build script's hash
/// (`styles-<hash>.css`, `bridge-console-<hash>_bg.wasm`). A hash is 16 or more hex digits after a
/// `-`. A new build gets new names, so such a file can be cached for good.
pub fn content_hashed(uri_path: &str) -> bool {
    let Some(rel) = relative(uri_path) else {
        return false;
    };
    // `-` then 16 or more hex digits, ending the segment (a directory) or followed by `.` / `_`.
    let hashed = |segment: &str, dir: bool| {
        segment.match_indices('-').any(|(i, _)| {
            let digits = segment[i + 1..]
                .bytes()
                .take_while(u8::is_ascii_hexdigit)
                .count();
            let after = segment.as_bytes().get(i + 1 + digits);
            digits >= 16
                && if dir {
                    after.is_none()
                } else {
                    matches!(after, Some(b'.' | b'_'))
                }
        })
    };
    match rel.split_once('/') {
        Some((dir, rest)) => dir.starts_with("console-") && !rest.is_empty() && hashed(dir, true),
        None => hashed(&rel, false),
    }
}

/// The `Cache-Control` for a console file: [`IMMUTABLE`] for a content-hashed one, else `no-cache`.
pub fn cache_control(uri_path: &str) -> HeaderValue {
    HeaderValue::from_static(if content_hashed(uri_path) {
        IMMUTABLE
    } else {
        "no-cache"
    })
}

/// The request path as a path relative to the static directory, or `None` when it could leave it.
fn relative(uri_path: &str) -> Option<String> {
    let trimmed = uri_path.trim_start_matches('/');
    if trimmed.is_empty() || trimmed.contains('\\') || trimmed.contains('%') {
        return None;
    }
    let ok = Path::new(trimmed)
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    ok.then(|| trimmed.to_owned())
}

/// Regular files under `dir` (`depth` levels), `/`-separated; symbolic links are not followed.
fn collect(dir: &Path, prefix: &str, depth: u32, out: &mut Vec<String>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = format!("{prefix}{name}");
        let t = e.file_type()?;
        if t.is_dir() && depth > 1 {
            collect(&e.path(), &format!("{rel}/"), depth - 1, out)?;
        } else if t.is_file() {
            out.push(rel);
            if out.len() > MAX_FILES {
                return Err(std::io::Error::other(format!(
                    "{} holds more than {MAX_FILES} files: not a console build",
                    dir.display()
                )));
            }
        }
    }
    Ok(())
}

fn brotli_bytes(data: &[u8]) -> Option<Bytes> {
    brotli_at(data, 11)
}

fn gzip_bytes(data: &[u8]) -> Option<Bytes> {
    gzip_at(data, flate2::Compression::best())
}

/// Compresses a small page made per request (the pre-rendered first screen, see
/// `http::first_screen`) with quicker settings than the static files' (Brotli 5, gzip 6).
pub fn compress_page(data: &[u8], encoding: Encoding) -> Option<Bytes> {
    match encoding {
        Encoding::Brotli => brotli_at(data, 5),
        Encoding::Gzip => gzip_at(data, flate2::Compression::new(6)),
    }
}

fn brotli_at(data: &[u8], quality: u32) -> Option<Bytes> {
    let mut out = Vec::with_capacity(data.len() / 3);
    {
        let mut w = brotli::CompressorWriter::new(&mut out, 64 * 1024, quality, 22);
        w.write_all(data).ok()?;
        w.flush().ok()?;
    }
    Some(out.into())
}

fn gzip_at(data: &[u8], level: flate2::Compression) -> Option<Bytes> {
    let mut w = flate2::write::GzEncoder::new(Vec::with_capacity(data.len() / 2), level);
    w.write_all(data).ok()?;
    w.finish().ok().map(Bytes::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn negotiation_prefers_brotli_and_honours_q_zero() {
        assert_eq!(
            negotiate(&accept("gzip, deflate, br, zstd")),
            Some(Encoding::Brotli)
        );
        assert_eq!(negotiate(&accept("gzip")), Some(Encoding::Gzip));
        assert_eq!(
            negotiate(&accept("br;q=0, gzip;q=0.5")),
            Some(Encoding::Gzip)
        );
        assert_eq!(negotiate(&accept("br;q=0.0, gzip; q=0")), None);
        assert_eq!(negotiate(&accept("identity")), None);
        assert_eq!(negotiate(&accept("*")), Some(Encoding::Brotli));
        assert_eq!(negotiate(&HeaderMap::new()), None);
    }

    #[test]
    fn request_paths_cannot_leave_the_directory() {
        assert_eq!(relative("/app_bg.wasm").as_deref(), Some("app_bg.wasm"));
        assert_eq!(relative("/icons/a.svg").as_deref(), Some("icons/a.svg"));
        for bad in ["/", "/../secret", "/a/../../b", "/%2e%2e/x", "/a\\..\\b"] {
            assert_eq!(relative(bad), None, "{bad}");
        }
    }

    #[test]
    fn hashed_build_files_are_immutable_and_the_rest_revalidated() {
        for hashed in [
            "/console-3b9f7f19a8d45931/bridge-console_bg.wasm",
            "/console-3b9f7f19a8d45931/split_session.wasm",
            "/styles-69db7f5e06f4d69c.css",
            "/bridge-console-8e0b9c3a1f2d4e5f_bg.wasm",
            "/bridge-console-8e0b9c3a1f2d4e5f.js",
        ] {
            assert!(content_hashed(hashed), "{hashed}");
            assert_eq!(cache_control(hashed), IMMUTABLE, "{hashed}");
        }
        for plain in [
            "/",
            "/index.html",
            "/sw.js",
            "/manifest.webmanifest",
            "/icons/icon-192.png",
            "/console-3b9f7f19a8d45931",
            "/console-xyz/bridge-console.js",
            "/styles-69db7f5e.css",
            "/s/cse_0123456789abcdef0123",
            "/console-3b9f7f19a8d45931/../sw.js",
        ] {
            assert!(!content_hashed(plain), "{plain}");
            assert_eq!(cache_control(plain), "no-cache", "{plain}");
        }
    }

    #[test]
    fn copies_round_trip() {
        let data: Vec<u8> = (0..50_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let br = brotli_bytes(&data).unwrap();
        let gz = gzip_bytes(&data).unwrap();
        assert!(br.len() < data.len() / 4 && gz.len() < data.len() / 2);
        let mut back = Vec::new();
        brotli::BrotliDecompress(&mut &br[..], &mut back).unwrap();
        assert_eq!(back, data);
        let mut back = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut back).unwrap();
        assert_eq!(back, data);
    }
}
