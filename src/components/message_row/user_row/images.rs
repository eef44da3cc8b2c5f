//! The images of a user message.

use leptos::prelude::*;

use crate::state::UserImage;
use crate::state::attachment::human_size;

/// Thumbnails of a prompt's images (`data-testid="user-image"`), from the message's own base64
/// data as `data:` URLs of the four raster types only; anything else (another type, a URL source)
/// is a labelled placeholder. Activating a thumbnail shows it at full width, and again to shrink it.
#[component]
pub fn UserImages(
    /// The message's images.
    images: Vec<UserImage>,
) -> impl IntoView {
    let n = images.len();
    view! {
        <div class="user-images" data-testid="user-images" role="group" aria-label=format!("{n} attached image(s)")>
            {images.into_iter().enumerate().map(|(i, img)| {
                let what = format!(
                    "Attached image {} of {n} ({}, {})",
                    i + 1,
                    img.media_type.strip_prefix("image/").unwrap_or(&img.media_type).to_uppercase(),
                    human_size(img.bytes() as u64),
                );
                match img.data_url() {
                    Some(url) => {
                        let big = RwSignal::new(false);
                        view! {
                            <button
                                type="button"
                                class="user-image-button"
                                class:expanded=move || big.get()
                                aria-pressed=move || big.get().to_string()
                                aria-label=format!("{what}: show larger")
                                on:click=move |_| big.update(|b| *b = !*b)
                            >
                                <img class="user-image" data-testid="user-image" data-media-type=img.media_type.clone() src=url alt=what.clone() />
                            </button>
                        }.into_any()
                    }
                    None => view! {
                        <span class="chip user-image-missing" data-testid="user-image-missing">{format!("{what}: not shown")}</span>
                    }.into_any(),
                }
            }).collect_view()}
        </div>
    }
}
