//! Reading picked, dropped or pasted files into [`Attachment`]s: text as UTF-8, images as base64,
//! and images over the limit downscaled on a canvas (`createImageBitmap`, then JPEG or WebP at
//! falling sizes and qualities, as [`downscale_attempt`] decides) until they fit.

use base64::Engine as _;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{CanvasRenderingContext2d, File, HtmlCanvasElement, ImageBitmap};

use super::Store;
use crate::state::attachment::{
    AttachError, FileKind, MAX_IMAGE_BASE64, classify, downscale_attempt, downscaled_type,
    needs_downscale,
};
use crate::state::{Attachment, AttachmentBody};

impl Store {
    /// Reads `files` one after the other (in the order given) into attachments. `next_id` names
    /// each (`None`: the draft is gone, stop); `fits` checks it against the draft as it is by then;
    /// `each` gets the attachment or why it cannot be attached; `done` runs at the end.
    pub fn read_attachments(
        &self,
        files: Vec<File>,
        mut next_id: impl FnMut() -> Option<String> + 'static,
        fits: impl Fn(&Attachment) -> Result<(), AttachError> + 'static,
        mut each: impl FnMut(Result<Attachment, AttachError>) + 'static,
        done: impl FnOnce() + 'static,
    ) {
        leptos::task::spawn_local(async move {
            for file in files {
                let Some(id) = next_id() else { break };
                let got = read(file, id).await.and_then(|a| {
                    fits(&a)?;
                    Ok(a)
                });
                each(got);
            }
            done();
        });
    }
}

fn js_why(e: JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "the browser refused".to_string())
}

/// The files of a `FileList` (input, drop, paste).
pub fn files_of(list: Option<web_sys::FileList>) -> Vec<File> {
    let Some(list) = list else { return vec![] };
    (0..list.length()).filter_map(|i| list.get(i)).collect()
}

async fn bytes_of(file: &File) -> Result<Vec<u8>, AttachError> {
    let buf = JsFuture::from(file.array_buffer())
        .await
        .map_err(|e| AttachError::Unreadable {
            name: file.name(),
            why: js_why(e),
        })?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}

/// Reads one file into an attachment, or says why it cannot be attached.
async fn read(file: File, id: String) -> Result<Attachment, AttachError> {
    let name = file.name();
    let size = file.size() as u64;
    match classify(&name, &file.type_(), size)? {
        FileKind::Text => {
            let bytes = bytes_of(&file).await?;
            let text = String::from_utf8(bytes)
                .ok()
                .filter(|t| !t.contains('\0'))
                .ok_or_else(|| AttachError::NotText { name: name.clone() })?;
            Ok(Attachment {
                id,
                name,
                body: AttachmentBody::Text { text },
                original_bytes: size,
                downscaled: None,
            })
        }
        FileKind::Image(media_type) => {
            let bytes = bytes_of(&file).await?;
            let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
            if !needs_downscale(data.len()) {
                return Ok(Attachment {
                    id,
                    name,
                    body: AttachmentBody::Image {
                        media_type: media_type.to_string(),
                        data: data.into(),
                    },
                    original_bytes: size,
                    downscaled: None,
                });
            }
            let (media_type, data, w, h) =
                downscale(&file, media_type, data.len())
                    .await
                    .map_err(|why| AttachError::ImageTooLarge {
                        name: name.clone(),
                        why,
                    })?;
            Ok(Attachment {
                id,
                name,
                body: AttachmentBody::Image {
                    media_type,
                    data: data.into(),
                },
                original_bytes: size,
                downscaled: Some((w, h)),
            })
        }
    }
}

/// Draws the image smaller until its encoding fits: (media type, base64, width, height).
async fn downscale(
    file: &File,
    media_type: &str,
    first_len: usize,
) -> Result<(String, String, u32, u32), String> {
    let window = web_sys::window().ok_or("no window")?;
    let bitmap: ImageBitmap = JsFuture::from(
        window
            .create_image_bitmap_with_blob(file)
            .map_err(|_| "the browser could not decode it".to_string())?,
    )
    .await
    .map_err(|_| "it is larger than 5 MB and the browser could not decode it to make it smaller")?
    .unchecked_into();
    let canvas: HtmlCanvasElement = window
        .document()
        .ok_or("no document")?
        .create_element("canvas")
        .map_err(js_why)?
        .unchecked_into();
    let want = downscaled_type(media_type);
    let mut last = first_len;
    let mut attempt = 0;
    let out = loop {
        let Some(a) = downscale_attempt(bitmap.width(), bitmap.height(), last, attempt) else {
            break Err(format!(
                "even made smaller it is over {} MB",
                MAX_IMAGE_BASE64 / (1024 * 1024)
            ));
        };
        attempt += 1;
        canvas.set_width(a.width);
        canvas.set_height(a.height);
        let ctx: CanvasRenderingContext2d = canvas
            .get_context("2d")
            .map_err(js_why)?
            .ok_or("no 2d canvas")?
            .unchecked_into();
        if want == "image/jpeg" {
            // JPEG has no transparency: what was transparent becomes white, not black.
            ctx.set_fill_style_str("#fff");
            ctx.fill_rect(0.0, 0.0, a.width as f64, a.height as f64);
        }
        ctx.draw_image_with_image_bitmap_and_dw_and_dh(
            &bitmap,
            0.0,
            0.0,
            a.width as f64,
            a.height as f64,
        )
        .map_err(js_why)?;
        let url = canvas
            .to_data_url_with_type_and_encoder_options(want, &JsValue::from_f64(a.quality))
            .map_err(js_why)?;
        // A browser that cannot encode WebP gives PNG: take what it made, as it says.
        let Some((head, data)) = url.split_once(',') else {
            break Err("the browser could not encode it".into());
        };
        let got = head
            .strip_prefix("data:")
            .and_then(|h| h.strip_suffix(";base64"))
            .unwrap_or(want)
            .to_string();
        if !needs_downscale(data.len()) {
            break Ok((got, data.to_string(), a.width, a.height));
        }
        last = data.len();
    };
    bitmap.close();
    out
}
