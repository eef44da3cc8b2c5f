//! The console's static files, compressed once and kept in memory.
//!
//! The console is about 1 MB of wasm; sent as is it is the slowest thing a phone on a mobile network
//! does. At startup (off the async runtime) every text-like file of the static directory is compressed
//! with Brotli (quality 11) and gzip (level 9); a request that accepts either gets the smaller copy.
//! Copies are checked against the file's length and modification time on every request, so a rebuilt
//! console is never served stale: a changed or new file goes out uncompressed (through `ServeDir`)
//! while its new copies are made. Nothing is written to disk.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

/// Files smaller than this are sent as they are (compression would not pay for its headers).
const MIN_SIZE: u64 = 1024;
/// Files larger than this are not kept in memory.
const MAX_SIZE: u64 = 32 * 1024 * 1024;

/// A regular file between [`MIN_SIZE`] and [`MAX_SIZE`].
fn worth_compressing(meta: &std::fs::Metadata) -> bool {
    meta.is_file() && (MIN_SIZE..=MAX_SIZE).contains(&meta.len())
}

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
    if br {
        Some(Encoding::Brotli)
    } else if gzip {
        Some(Encoding::Gzip)
    } else {
        None
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Self {
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

struct Copies {
    stamp: Stamp,
    media_type: &'static str,
    brotli: Bytes,
    gzip: Bytes,
}

impl Copies {
    /// A strong validator of this copy: the file's length and modification time, and the coding.
    fn etag(&self, encoding: Encoding) -> String {
        let nanos = self
            .stamp
            .modified
            .and_then(|m| m.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        let coding = match encoding {
            Encoding::Brotli => "br",
            Encoding::Gzip => "gz",
        };
        format!("\"{:x}-{nanos:x}-{coding}\"", self.stamp.len)
    }
}

/// Compressed copies of the static directory's files, by path relative to it (`/`-separated).
pub struct Precompressed {
    dir: PathBuf,
    copies: RwLock<HashMap<String, Arc<Copies>>>,
    /// Paths being compressed now (so a burst of requests starts one job).
    working: std::sync::Mutex<std::collections::HashSet<String>>,
}

impl Precompressed {
    /// An empty cache for `dir`; [`Self::warm`] fills it.
    pub fn new(dir: &Path) -> Arc<Self> {
        Arc::new(Precompressed {
            dir: dir.to_path_buf(),
            copies: RwLock::default(),
            working: std::sync::Mutex::default(),
        })
    }

    /// Compresses every compressible file under the directory (two levels deep) on a blocking thread.
    pub fn warm(self: &Arc<Self>) {
        let me = self.clone();
        tokio::task::spawn_blocking(move || {
            let started = std::time::Instant::now();
            let mut files = Vec::new();
            collect(&me.dir, "", 2, &mut files);
            let (mut raw, mut br) = (0u64, 0u64);
            for rel in files {
                if let Some(c) = me.compress(&rel) {
                    raw += c.stamp.len;
                    br += c.brotli.len() as u64;
                }
            }
            if raw > 0 {
                tracing::info!(
                    bytes = raw,
                    brotli = br,
                    ms = started.elapsed().as_millis() as u64,
                    "console files compressed"
                );
            }
        });
    }

    /// Compresses one file (path relative to the directory) and keeps the copies.
    fn compress(&self, rel: &str) -> Option<Arc<Copies>> {
        let path = self.dir.join(rel);
        let media_type = media_type(&path)?;
        let meta = std::fs::metadata(&path).ok()?;
        if !worth_compressing(&meta) {
            return None;
        }
        let data = std::fs::read(&path).ok()?;
        let stamp = Stamp::of(&meta);
        if data.len() as u64 != stamp.len {
            return None; // changed while being read: the next request tries again
        }
        let copies = Arc::new(Copies {
            stamp,
            media_type,
            brotli: brotli_bytes(&data)?,
            gzip: gzip_bytes(&data)?,
        });
        self.copies
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(rel.to_owned(), copies.clone());
        Some(copies)
    }

    /// The compressed response for `uri_path`, if the request accepts it and an up-to-date copy
    /// exists. A compressible file without a current copy gets one made in the background.
    pub fn respond(
        self: &Arc<Self>,
        method: &Method,
        uri_path: &str,
        headers: &HeaderMap,
    ) -> Option<Response> {
        if method != Method::GET && method != Method::HEAD {
            return None;
        }
        let encoding = negotiate(headers)?;
        let rel = relative(uri_path)?;
        let path = self.dir.join(&rel);
        media_type(&path)?;
        let meta = std::fs::metadata(&path).ok()?;
        if !worth_compressing(&meta) {
            return None; // never compressed: no background job for it either
        }
        let stamp = Stamp::of(&meta);
        let cached = self
            .copies
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&rel)
            .cloned();
        let Some(copies) = cached.filter(|c| c.stamp == stamp) else {
            self.compress_later(rel);
            return None;
        };
        let body = match encoding {
            Encoding::Brotli => copies.brotli.clone(),
            Encoding::Gzip => copies.gzip.clone(),
        };
        let etag = copies.etag(encoding);
        let fresh = headers
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
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
        // rebuilt console never mixes with cached parts of the old one.
        h.insert(header::CACHE_CONTROL, cache_control(uri_path));
        if let Ok(v) = HeaderValue::from_str(&etag) {
            h.insert(header::ETAG, v);
        }
        if fresh {
            h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
            return Some(res);
        }
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(copies.media_type),
        );
        h.insert(header::CONTENT_ENCODING, encoding.header());
        h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
        Some(res.into_response())
    }

    fn compress_later(self: &Arc<Self>, rel: String) {
        {
            let mut working = self.working.lock().unwrap_or_else(|e| e.into_inner());
            if !working.insert(rel.clone()) {
                return;
            }
        }
        let me = self.clone();
        tokio::task::spawn_blocking(move || {
            me.compress(&rel);
            me.working
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&rel);
        });
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

/// Sets the `Cache-Control` of a static file served without a compressed copy (`ServeDir`): a
/// content-hashed file that was found gets [`IMMUTABLE`]; anything else — the index.html fallback
/// of a missing file above all, which must never be cached under a hashed name — `no-cache`.
pub fn set_cache_control(uri_path: &str, res: &mut Response) {
    let found = matches!(res.status(), StatusCode::OK | StatusCode::NOT_MODIFIED)
        && !res
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/html"));
    let value = if found {
        cache_control(uri_path)
    } else {
        HeaderValue::from_static("no-cache")
    };
    res.headers_mut().insert(header::CACHE_CONTROL, value);
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

fn collect(dir: &Path, prefix: &str, depth: u32, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = format!("{prefix}{name}");
        match e.file_type() {
            Ok(t) if t.is_dir() && depth > 1 => {
                collect(&e.path(), &format!("{rel}/"), depth - 1, out)
            }
            Ok(t) if t.is_file() => out.push(rel),
            _ => {}
        }
    }
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
