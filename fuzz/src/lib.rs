//! Shared pieces of the fuzz targets.
//!
//! The console crate (`bridge-console`) is a Leptos CSR app: building it here would instrument all of
//! Leptos and web-sys for nothing. Its two pure modules that untrusted text reaches — the markdown
//! renderer's tree builder and the partial-JSON repair — depend only on pulldown-cmark and
//! serde_json, so they are compiled here from the very same source files.

pub mod targets;

#[path = "../../src/markdown.rs"]
pub mod markdown;

#[path = "../../src/state/partial_json.rs"]
pub mod partial_json;

/// Splits `data` into chunks whose sizes come from `sizes` (cycled; a size of 0 means 1), so a
/// sans-IO decoder sees the same bytes cut at places the fuzzer chooses.
pub fn chunks<'a>(data: &'a [u8], sizes: &[u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    let mut i = 0;
    while !rest.is_empty() {
        let size = sizes
            .get(i % sizes.len().max(1))
            .map_or(rest.len(), |&s| usize::from(s).max(1));
        let (head, tail) = rest.split_at(size.min(rest.len()));
        out.push(head);
        rest = tail;
        i += 1;
    }
    out
}

/// The line cap a parameter byte picks: mostly `default` (the real cap); with its high bit set, a
/// tiny one (its low six bits, 0 to 63 bytes) so the over-long path is reached.
pub fn line_cap(param: u8, default: usize) -> usize {
    if param & 0x80 == 0 {
        default
    } else {
        usize::from(param & 0x3f)
    }
}

/// The first byte of a fuzz input as a parameter, the rest as the data.
pub fn split_first(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((&b, rest)) => (b, rest),
        None => (0, data),
    }
}
