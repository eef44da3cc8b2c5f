//! Attachments of a prompt being composed: which files the console takes, how large they may be, when
//! and how far an image is downscaled, and the content blocks they become in the `user` message.
//! Pure: reading files and drawing on a canvas happen in `components/composer/files.rs`.

use std::sync::Arc;

use bridge_protocol::build;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Largest image sent, counted as its base64 payload (what the Messages API limits): 5 MB.
pub const MAX_IMAGE_BASE64: usize = 5 * 1024 * 1024;
/// Largest text file attached (its UTF-8 bytes).
pub const MAX_TEXT_BYTES: usize = 256 * 1024;
/// Largest whole message (all attachments and the text). The relay takes 8 MiB by default
/// (`--max-body-bytes`); the rest is room for the JSON around it.
pub const MAX_MESSAGE_BYTES: usize = 7 * 1024 * 1024 + 512 * 1024;
/// Most attachments on one message.
pub const MAX_ATTACHMENTS: usize = 10;
/// Longest side of a downscaled image (the model sees at most ~1.5k px per side anyway).
pub const MAX_DOWNSCALED_SIDE: u32 = 2048;
/// Image types the model takes.
pub const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/// What the file picker offers.
pub const ACCEPT: &str = "image/png,image/jpeg,image/gif,image/webp,text/*,.md,.txt,.json,.csv,.log,.rs,.py,.ts,.js,.toml,.yaml,.yml,.sh,.diff,.patch";

/// Extensions read as text when the browser gives no (or a generic) type.
const TEXT_EXTENSIONS: &str = concat!(
    "txt md markdown json jsonl ndjson csv tsv log rs py ts tsx js jsx mjs toml yaml ",
    "yml sh bash zsh diff patch html htm css xml ini cfg conf sql go java kt c h cpp ",
    "hpp cs rb php swift lua env gitignore dockerfile makefile ",
);
/// Non-`text/` types that are text.
const TEXT_TYPES: &[&str] = &[
    "application/json",
    "application/x-ndjson",
    "application/xml",
    "application/javascript",
    "application/x-javascript",
    "application/typescript",
    "application/toml",
    "application/x-toml",
    "application/yaml",
    "application/x-yaml",
    "application/x-sh",
    "application/sql",
];

/// What an attachment holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AttachmentBody {
    /// An image: its media type and base64 data (no `data:` prefix).
    Image {
        /// One of [`IMAGE_TYPES`].
        media_type: String,
        /// Base64 of the bytes sent.
        data: Arc<str>,
    },
    /// A text file's content.
    Text {
        /// The text.
        text: String,
    },
}

/// One attached file, ready to send.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attachment {
    /// Local id (for the preview's list and its remove button).
    pub id: String,
    /// The file's name (shown; given to the model for text files).
    pub name: String,
    /// The content.
    pub body: AttachmentBody,
    /// Size of the file as picked.
    pub original_bytes: u64,
    /// The image was made smaller to fit: its new width and height.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downscaled: Option<(u32, u32)>,
}

impl Attachment {
    /// Bytes this attachment adds to the message (base64 for images, UTF-8 for text).
    pub fn wire_bytes(&self) -> usize {
        match &self.body {
            AttachmentBody::Image { data, .. } => data.len(),
            AttachmentBody::Text { text } => text.len() + self.name.len() + 40,
        }
    }

    /// "PNG image, 12 KB" / "text, 3 KB" — for the preview and screen readers.
    pub fn describe(&self) -> String {
        match &self.body {
            AttachmentBody::Image { media_type, data } => {
                let kind = media_type
                    .strip_prefix("image/")
                    .unwrap_or(media_type)
                    .to_uppercase();
                let size = human_size(decoded_len(data.len()) as u64);
                match self.downscaled {
                    Some((w, h)) => format!(
                        "{kind} image, {size} (downscaled to {w}×{h} from {})",
                        human_size(self.original_bytes)
                    ),
                    None => format!("{kind} image, {size}"),
                }
            }
            AttachmentBody::Text { text } => format!("text, {}", human_size(text.len() as u64)),
        }
    }

    /// The image's `data:` URL for a thumbnail (None for text).
    pub fn data_url(&self) -> Option<String> {
        match &self.body {
            AttachmentBody::Image { media_type, data } => {
                Some(format!("data:{media_type};base64,{data}"))
            }
            AttachmentBody::Text { .. } => None,
        }
    }
}

/// What a picked file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// An image of this media type.
    Image(&'static str),
    /// A text file.
    Text,
}

/// Why a file was not attached (shown inline; the draft keeps everything else).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttachError {
    /// Not an image the model takes, nor text.
    Unsupported {
        /// File name.
        name: String,
        /// Its type as the browser reported it.
        media_type: String,
    },
    /// A text file over [`MAX_TEXT_BYTES`].
    TextTooLarge {
        /// File name.
        name: String,
        /// Its size.
        bytes: u64,
    },
    /// A "text" file that is not UTF-8.
    NotText {
        /// File name.
        name: String,
    },
    /// An image that could not be made small enough (or not decoded at all).
    ImageTooLarge {
        /// File name.
        name: String,
        /// Why.
        why: String,
    },
    /// More than [`MAX_ATTACHMENTS`].
    TooMany,
    /// The whole message would be over [`MAX_MESSAGE_BYTES`].
    MessageTooLarge {
        /// File name of the attachment that did not fit.
        name: String,
    },
    /// The browser could not read the file.
    Unreadable {
        /// File name.
        name: String,
        /// The browser's reason.
        why: String,
    },
}

impl std::fmt::Display for AttachError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttachError::Unsupported { name, media_type } => {
                let t = if media_type.is_empty() {
                    "an unknown type".to_string()
                } else {
                    media_type.clone()
                };
                write!(
                    f,
                    "{name} was not attached: {t} is not supported. Attach PNG, JPEG, GIF or WebP images, or text files."
                )
            }
            AttachError::TextTooLarge { name, bytes } => write!(
                f,
                "{name} was not attached: it is {}, and text files can be at most {}.",
                human_size(*bytes),
                human_size(MAX_TEXT_BYTES as u64)
            ),
            AttachError::NotText { name } => write!(
                f,
                "{name} was not attached: it is not UTF-8 text. Attach text files or PNG, JPEG, GIF or WebP images."
            ),
            AttachError::ImageTooLarge { name, why } => write!(
                f,
                "{name} was not attached: {why}. Images can be at most {} (larger ones are downscaled when the browser can decode them).",
                human_size(MAX_IMAGE_BASE64 as u64)
            ),
            AttachError::TooMany => write!(
                f,
                "At most {MAX_ATTACHMENTS} attachments per message: send these first, then attach more."
            ),
            AttachError::MessageTooLarge { name } => write!(
                f,
                "{name} was not attached: the message would be over {} in all. Send it in a message of its own.",
                human_size(MAX_MESSAGE_BYTES as u64)
            ),
            AttachError::Unreadable { name, why } => {
                write!(f, "{name} could not be read ({why}).")
            }
        }
    }
}

fn extension(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name);
    match base.rsplit_once('.') {
        Some((_, ext)) => ext.to_ascii_lowercase(),
        None => base.to_ascii_lowercase(),
    }
}

/// Decides what a picked file is from its name, the type the browser reports and its size.
pub fn classify(name: &str, media_type: &str, bytes: u64) -> Result<FileKind, AttachError> {
    let mt = media_type.trim().to_ascii_lowercase();
    let mt = mt.split(';').next().unwrap_or_default().trim().to_string();
    let image = match mt.as_str() {
        "image/png" => Some("image/png"),
        "image/jpeg" | "image/jpg" | "image/pjpeg" => Some("image/jpeg"),
        "image/gif" => Some("image/gif"),
        "image/webp" => Some("image/webp"),
        "" | "application/octet-stream" => match extension(name).as_str() {
            "png" => Some("image/png"),
            "jpg" | "jpeg" => Some("image/jpeg"),
            "gif" => Some("image/gif"),
            "webp" => Some("image/webp"),
            _ => None,
        },
        _ => None,
    };
    if let Some(t) = image {
        return Ok(FileKind::Image(t));
    }
    let generic = mt.is_empty() || mt == "application/octet-stream";
    let text = (mt.starts_with("text/") || TEXT_TYPES.contains(&mt.as_str()))
        || (generic
            && TEXT_EXTENSIONS
                .split_whitespace()
                .any(|e| e == extension(name)));
    if !text {
        return Err(AttachError::Unsupported {
            name: name.to_string(),
            media_type: mt,
        });
    }
    if bytes > MAX_TEXT_BYTES as u64 {
        return Err(AttachError::TextTooLarge {
            name: name.to_string(),
            bytes,
        });
    }
    Ok(FileKind::Text)
}

/// Length of the base64 of `bytes` bytes.
pub fn base64_len(bytes: u64) -> u64 {
    bytes.div_ceil(3) * 4
}

/// Bytes decoded from `b64` base64 characters (about).
pub fn decoded_len(b64: usize) -> usize {
    b64 / 4 * 3
}

/// An image whose base64 is this long must be downscaled before it is sent.
pub fn needs_downscale(base64_len: usize) -> bool {
    base64_len > MAX_IMAGE_BASE64
}

/// One try at making an image smaller: draw it at this size, encode at this quality.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attempt {
    /// Width drawn.
    pub width: u32,
    /// Height drawn.
    pub height: u32,
    /// Encoder quality (0–1).
    pub quality: f64,
}

/// The `attempt`-th (from 0) try at downscaling a `width`×`height` image whose last encoding was
/// `last_len` base64 characters, or None when it is not worth trying again (too many tries, or too
/// small to be of use). The first try aims under the limit with a margin, at most
/// [`MAX_DOWNSCALED_SIDE`] on the long side; each later one shrinks by a quarter and lowers the quality.
pub fn downscale_attempt(
    width: u32,
    height: u32,
    last_len: usize,
    attempt: u32,
) -> Option<Attempt> {
    if attempt >= 6 || width == 0 || height == 0 {
        return None;
    }
    let long = width.max(height) as f64;
    let by_size = ((MAX_IMAGE_BASE64 as f64 / last_len.max(1) as f64).sqrt() * 0.9).min(1.0);
    let by_side = (MAX_DOWNSCALED_SIDE as f64 / long).min(1.0);
    let scale = by_size.min(by_side) * 0.75f64.powi(attempt as i32);
    let w = (width as f64 * scale).round() as u32;
    let h = (height as f64 * scale).round() as u32;
    if w.min(h) < 16 {
        return None;
    }
    Some(Attempt {
        width: w.max(1),
        height: h.max(1),
        quality: (0.85 - 0.1 * attempt as f64).max(0.45),
    })
}

/// The type a downscaled image is encoded as: JPEG stays JPEG; PNG, GIF and WebP (which may be
/// transparent) become WebP.
pub fn downscaled_type(media_type: &str) -> &'static str {
    if media_type == "image/jpeg" {
        "image/jpeg"
    } else {
        "image/webp"
    }
}

/// The text block of an attached text file: named, so the model knows what it is.
pub fn text_file_block(name: &str, text: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| if c == '"' || c.is_control() { '_' } else { c })
        .collect();
    format!("<attached-file name=\"{name}\">\n{text}\n</attached-file>")
}

/// The `content` blocks of a prompt: images first (as the Messages API recommends), then text
/// files, then what was typed (when anything was).
pub fn content_blocks(text: &str, attachments: &[Attachment]) -> Vec<Value> {
    let mut blocks = Vec::new();
    for a in attachments {
        if let AttachmentBody::Image { media_type, data } = &a.body {
            blocks.push(build::value::image_base64(media_type, data));
        }
    }
    for a in attachments {
        if let AttachmentBody::Text { text } = &a.body {
            blocks.push(build::value::text_block(&text_file_block(&a.name, text)));
        }
    }
    if !text.trim().is_empty() {
        blocks.push(build::value::text_block(text));
    }
    blocks
}

/// The text the transcript shows for a prompt with these attachments: its text blocks joined by
/// newlines, as the CLI's echo of the message reads (so the echo matches the pending row).
pub fn shown_text(text: &str, attachments: &[Attachment]) -> String {
    content_blocks(text, attachments)
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Checks one more attachment fits the message (count and total size).
pub fn check_fits(
    text: &str,
    current: &[Attachment],
    next: &Attachment,
) -> Result<(), AttachError> {
    if current.len() >= MAX_ATTACHMENTS {
        return Err(AttachError::TooMany);
    }
    let total: usize =
        text.len() + current.iter().map(Attachment::wire_bytes).sum::<usize>() + next.wire_bytes();
    if total > MAX_MESSAGE_BYTES {
        return Err(AttachError::MessageTooLarge {
            name: next.name.clone(),
        });
    }
    Ok(())
}

/// "512 B", "12 KB", "4.8 MB".
pub fn human_size(bytes: u64) -> String {
    const K: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if b < K * K {
        format!("{:.0} KB", (b / K).max(1.0))
    } else {
        format!("{:.1} MB", b / (K * K))
    }
}

/// An image of a user message, as shown in the transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct UserImage {
    /// Its media type.
    pub media_type: String,
    /// Base64 data (empty when the block had none this console can show, e.g. a URL source).
    pub data: Arc<str>,
}

impl UserImage {
    /// Reads an `image` content block.
    pub fn from_block(block: &Value) -> Self {
        Self::from_source(block.get("source").unwrap_or(&Value::Null))
    }

    /// From an image block's `source`.
    pub fn from_source(source: &Value) -> Self {
        let get = |k: &str| source.get(k).and_then(Value::as_str).unwrap_or_default();
        let inline = get("type") == "base64";
        UserImage {
            media_type: get("media_type").to_string(),
            data: if inline {
                Arc::from(get("data"))
            } else {
                Arc::from("")
            },
        }
    }

    /// A `data:` URL to show it, only for the raster types the model takes and data that is plain
    /// base64 (anything else shows as a placeholder, never as markup).
    pub fn data_url(&self) -> Option<String> {
        let ok_type = IMAGE_TYPES.contains(&self.media_type.as_str());
        let ok_data = !self.data.is_empty()
            && self
                .data
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
        (ok_type && ok_data).then(|| format!("data:{};base64,{}", self.media_type, self.data))
    }

    /// Its decoded size.
    pub fn bytes(&self) -> usize {
        decoded_len(self.data.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn image(name: &str, b64_len: usize) -> Attachment {
        Attachment {
            id: name.into(),
            name: name.into(),
            body: AttachmentBody::Image {
                media_type: "image/png".into(),
                data: Arc::from("A".repeat(b64_len)),
            },
            original_bytes: decoded_len(b64_len) as u64,
            downscaled: None,
        }
    }

    #[test]
    fn images_and_text_files_are_taken_and_the_rest_refused() {
        assert_eq!(
            classify("a.png", "image/png", 10),
            Ok(FileKind::Image("image/png"))
        );
        assert_eq!(classify("a.JPG", "", 10), Ok(FileKind::Image("image/jpeg")));
        assert_eq!(
            classify("photo", "image/jpg", 10),
            Ok(FileKind::Image("image/jpeg"))
        );
        // Images of any size are taken here: the large ones are downscaled.
        assert_eq!(
            classify("big.webp", "image/webp", 50_000_000),
            Ok(FileKind::Image("image/webp"))
        );
        assert_eq!(classify("notes.md", "", 10), Ok(FileKind::Text));
        assert_eq!(
            classify("a.json", "application/json", 10),
            Ok(FileKind::Text)
        );
        assert_eq!(
            classify("a.txt", "text/plain;charset=utf-8", 10),
            Ok(FileKind::Text)
        );
        assert!(matches!(
            classify("a.pdf", "application/pdf", 10),
            Err(AttachError::Unsupported { .. })
        ));
        assert!(matches!(
            classify("a.svg", "image/svg+xml", 10),
            Err(AttachError::Unsupported { .. })
        ));
        assert!(matches!(
            classify("x.bin", "", 10),
            Err(AttachError::Unsupported { .. })
        ));
        let big = classify("log.txt", "text/plain", MAX_TEXT_BYTES as u64 + 1);
        assert!(matches!(big, Err(AttachError::TextTooLarge { .. })));
        assert!(big.unwrap_err().to_string().contains("256 KB"));
        assert_eq!(
            classify("log.txt", "text/plain", MAX_TEXT_BYTES as u64),
            Ok(FileKind::Text)
        );
        let e = classify("scan.tiff", "image/tiff", 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("image/tiff is not supported"), "{e}");
    }

    #[test]
    fn the_5_mb_limit_counts_base64_and_downscaling_aims_under_it() {
        assert_eq!(base64_len(3), 4);
        assert_eq!(base64_len(4), 8);
        assert!(!needs_downscale(MAX_IMAGE_BASE64));
        assert!(needs_downscale(MAX_IMAGE_BASE64 + 1));
        // A 4,000,000-byte file is 5,333,336 bytes of base64: too large; 3,900,000 bytes fit.
        assert!(needs_downscale(base64_len(4_000_000) as usize));
        assert!(!needs_downscale(base64_len(3_900_000) as usize));

        // A 4000×3000 photo at 20 MB of base64: the first try halves the area or more, and caps the side.
        let a = downscale_attempt(4000, 3000, 20 * 1024 * 1024, 0).unwrap();
        assert!(a.width <= MAX_DOWNSCALED_SIDE && a.height <= MAX_DOWNSCALED_SIDE);
        assert_eq!(a.width * 3000 / 4000, a.height, "aspect ratio kept");
        assert!((a.quality - 0.85).abs() < 1e-9);
        // Each later try is smaller, at a lower quality, and they stop.
        let mut prev = a;
        for i in 1..6 {
            let next = downscale_attempt(4000, 3000, 20 * 1024 * 1024, i).unwrap();
            assert!(next.width < prev.width && next.quality <= prev.quality);
            prev = next;
        }
        assert_eq!(downscale_attempt(4000, 3000, 20 * 1024 * 1024, 6), None);
        // A small image that is too large (noise) shrinks only by size.
        let s = downscale_attempt(1200, 800, 6 * 1024 * 1024, 0).unwrap();
        assert!(s.width < 1200 && s.width > 900, "{s:?}");
        // Too small to be worth it.
        assert_eq!(downscale_attempt(20, 10, 6 * 1024 * 1024, 0), None);
        assert_eq!(downscaled_type("image/jpeg"), "image/jpeg");
        assert_eq!(downscaled_type("image/png"), "image/webp");
        assert_eq!(downscaled_type("image/gif"), "image/webp");
    }

    #[test]
    fn blocks_put_images_first_then_files_then_the_text() {
        let img = image("shot.png", 8);
        let txt = Attachment {
            id: "t".into(),
            name: "no\"tes.md".into(),
            body: AttachmentBody::Text {
                text: "<b>hi</b>".into(),
            },
            original_bytes: 9,
            downscaled: None,
        };
        let blocks = content_blocks("what is this?", &[txt.clone(), img.clone()]);
        assert_eq!(
            blocks,
            vec![
                json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAAAAAA"}}),
                json!({"type": "text", "text": "<attached-file name=\"no_tes.md\">\n<b>hi</b>\n</attached-file>"}),
                json!({"type": "text", "text": "what is this?"}),
            ]
        );
        // An image alone is a valid message.
        assert_eq!(content_blocks("  ", std::slice::from_ref(&img)).len(), 1);
        assert_eq!(shown_text("  ", std::slice::from_ref(&img)), "");
        assert_eq!(
            shown_text("what is this?", &[img, txt]),
            "<attached-file name=\"no_tes.md\">\n<b>hi</b>\n</attached-file>\nwhat is this?"
        );
    }

    #[test]
    fn a_message_holds_at_most_ten_attachments_and_about_7_5_mb() {
        let four = image("a.png", 4 * 1024 * 1024);
        assert_eq!(check_fits("hi", &[], &four), Ok(()));
        assert_eq!(
            check_fits("hi", std::slice::from_ref(&four), &four),
            Err(AttachError::MessageTooLarge {
                name: "a.png".into()
            })
        );
        let small = image("s.png", 10);
        let ten = vec![small.clone(); MAX_ATTACHMENTS];
        assert_eq!(check_fits("", &ten, &small), Err(AttachError::TooMany));
        // Under the relay's default cap (8 MiB), with room for the JSON around it.
        const { assert!(MAX_MESSAGE_BYTES + 64 * 1024 < 8 * 1024 * 1024) };
    }

    #[test]
    fn sizes_read_like_a_person_would_write_them() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(12 * 1024 + 100), "12 KB");
        assert_eq!(human_size(5 * 1024 * 1024), "5.0 MB");
        let a = image("x.png", 16 * 1024);
        assert_eq!(a.describe(), "PNG image, 12 KB");
    }

    #[test]
    fn transcript_images_show_only_plain_base64_raster_data() {
        let ok = UserImage::from_block(
            &json!({"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": "R0lGOD+/="}}),
        );
        assert_eq!(
            ok.data_url().as_deref(),
            Some("data:image/gif;base64,R0lGOD+/=")
        );
        let svg = UserImage::from_block(
            &json!({"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml", "data": "PHN2Zz4="}}),
        );
        assert_eq!(svg.data_url(), None);
        let injected = UserImage::from_block(
            &json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA\" onerror=\"x"}}),
        );
        assert_eq!(injected.data_url(), None);
        let url = UserImage::from_block(
            &json!({"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}),
        );
        assert_eq!(url.data_url(), None);
        assert_eq!(url.bytes(), 0);
    }

    #[test]
    fn attachments_round_trip_as_json_for_the_unsent_store() {
        let a = Attachment {
            downscaled: Some((800, 600)),
            ..image("a.png", 8)
        };
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v["body"]["kind"], "image");
        assert_eq!(serde_json::from_value::<Attachment>(v).unwrap(), a);
    }
}
