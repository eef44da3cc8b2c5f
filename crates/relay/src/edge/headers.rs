//! Security headers on every answer, pages and API alike: a strict `Content-Security-Policy`,
//! `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`.
//!
//! Trunk writes its wasm loader into `index.html` as an inline `<script type="module">`. Rather than
//! allow inline script, the relay hashes every inline script of the `index.html` it serves, once at
//! startup, and allows exactly those (`'sha256-…'`): a script injected into the page runs nowhere,
//! and the build needs no extra step. A rebuilt console is picked up at the next start (the file
//! names change with each build, so the relay must be restarted to serve it anyway).

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine as _;
use sha2::{Digest as _, Sha256};

/// The policy for a console whose `index.html` holds `index` (`None`: no console, no inline script).
///
/// `style-src 'unsafe-inline'` stays because the console sets `style` attributes (the transcript's
/// virtual-scroll spacers); styles cannot run code.
pub fn content_security_policy(index: Option<&str>) -> String {
    content_security_policy_embedded(index, &[])
}

/// The policy, letting pages of `embed_origins` (--embed-origin, checked plain origins) frame the
/// console: `frame-ancestors 'self'` plus those origins. Nobody else can frame it (clickjacking).
pub fn content_security_policy_embedded(index: Option<&str>, embed_origins: &[String]) -> String {
    let mut frame_ancestors = String::from("'self'");
    for o in embed_origins
        .iter()
        .filter(|o| crate::core::config::is_embed_origin(o))
    {
        frame_ancestors.push(' ');
        frame_ancestors.push_str(o);
    }
    let mut script_src = String::from("'self' 'wasm-unsafe-eval'");
    for hash in index.map(inline_script_hashes).unwrap_or_default() {
        script_src.push_str(&format!(" 'sha256-{hash}'"));
    }
    format!(
        "default-src 'self'; script-src {script_src}; style-src 'self' 'unsafe-inline'; \
         connect-src 'self'; img-src 'self' data: blob:; worker-src 'self'; manifest-src 'self'; \
         object-src 'none'; frame-ancestors {frame_ancestors}; base-uri 'none'; form-action 'self'"
    )
}

/// Base64 SHA-256 of the body of every `<script>` without a `src` attribute, in document order.
pub fn inline_script_hashes(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(start) = lower[from..].find("<script").map(|i| i + from) {
        let Some(tag_end) = lower[start..].find('>').map(|i| i + start + 1) else {
            break;
        };
        let Some(close) = lower[tag_end..].find("</script").map(|i| i + tag_end) else {
            break;
        };
        let tag = &lower[start..tag_end];
        if !tag.contains(" src=") && !tag.contains("\tsrc=") && !tag.contains("\nsrc=") {
            let digest = Sha256::digest(&html.as_bytes()[tag_end..close]);
            out.push(base64::engine::general_purpose::STANDARD.encode(digest));
        }
        from = close;
    }
    out
}

/// The middleware: adds the three headers unless a handler set them already.
pub async fn add(csp: HeaderValue, req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.entry(header::CONTENT_SECURITY_POLICY).or_insert(csp);
    h.entry(header::X_CONTENT_TYPE_OPTIONS)
        .or_insert(HeaderValue::from_static("nosniff"));
    h.entry(header::REFERRER_POLICY)
        .or_insert(HeaderValue::from_static("no-referrer"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_inline_scripts_only() {
        let html = "<head><script type=\"module\">\nimport init from '/a.js';\n</script>\
                    <script src=\"/b.js\"></script><SCRIPT>x()</SCRIPT></head>";
        let h = inline_script_hashes(html);
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(Sha256::digest(s));
        assert_eq!(h, vec![b64("\nimport init from '/a.js';\n"), b64("x()")]);
        let csp = content_security_policy(Some(html));
        assert!(csp.contains(&format!("'sha256-{}'", h[0])), "{csp}");
        assert!(!csp.contains("'unsafe-inline' 'wasm") && !csp.contains("script-src 'unsafe"));
        assert!(!content_security_policy(None).contains("sha256"));
    }

    #[test]
    fn frame_ancestors_are_self_plus_the_embed_origins() {
        assert!(content_security_policy(None).contains("frame-ancestors 'self';"));
        let csp = content_security_policy_embedded(
            None,
            &["https://app.example".into(), "http://127.0.0.1:5173".into()],
        );
        assert!(
            csp.contains("frame-ancestors 'self' https://app.example http://127.0.0.1:5173;"),
            "{csp}"
        );
    }
}
