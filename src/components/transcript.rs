//! The transcript, virtualized.

pub mod transcript_row;

use std::collections::HashMap;
use std::rc::Rc;

use leptos::prelude::*;

use crate::dom::{self, RowObserver};
use crate::store::Store;
use crate::virtual_window::compute;

pub use transcript_row::TranscriptRow;

/// Estimated height of a row not measured yet.
pub const DEFAULT_ROW_HEIGHT: f64 = 96.0;
/// Extra height rendered above and below the viewport.
pub const OVERSCAN_PX: f64 = 800.0;

/// How long after the person's last wheel, touch, key or pointer input a scroll counts as theirs.
pub const USER_SCROLL_WINDOW_MS: f64 = 1_000.0;

/// Measures rendered rows (context for [`TranscriptRow`]).
#[derive(Clone, Copy)]
pub struct RowMeasure(pub StoredValue<Rc<RowObserver>, LocalStorage>);

/// The session's rows in order (`data-testid="transcript"`, `role="log"`). Only rows near the
/// viewport are in the DOM (keyed by row key); their measured heights keep the scrollbar honest.
/// It follows the bottom while the person is there.
#[component]
pub fn Transcript() -> impl IntoView {
    let store = Store::expect();
    let session = store.session;
    let order_rev = Memo::new(move |_| session.with(|s| s.order_rev()));
    let keys = Memo::new(move |_| {
        // Read (not just track) the memo so it is brought up to date.
        let _ = order_rev.get();
        session.with_untracked(|s| s.order().to_vec())
    });
    let heights: StoredValue<HashMap<String, f64>> = StoredValue::new(HashMap::new());
    let heights_rev = RwSignal::new(0u64);
    let scroll_top = RwSignal::new(0.0f64);
    let viewport_h = RwSignal::new(900.0f64);
    let stick = StoredValue::new(true);
    let scroller: NodeRef<leptos::html::Div> = NodeRef::new();

    let on_size: Rc<dyn Fn(String, f64)> = Rc::new(move |key, h| {
        let changed = heights
            .try_update_value(|m| match m.insert(key, h) {
                Some(old) => (old - h).abs() > 0.5,
                None => true,
            })
            .unwrap_or(false);
        if changed {
            // The observer can report after unmount: never touch a disposed signal.
            heights_rev.try_update(|r| *r += 1);
        }
    });
    provide_context(RowMeasure(StoredValue::new_local(Rc::new(
        RowObserver::new(on_size),
    ))));

    let window = Memo::new(move |_| {
        let _ = heights_rev.get();
        let top = scroll_top.get();
        let vh = viewport_h.get();
        keys.with(|k| {
            heights.with_value(|h| compute(k, h, DEFAULT_ROW_HEIGHT, top, vh, OVERSCAN_PX))
        })
    });
    let visible = move || {
        let w = window.get();
        keys.with(|k| {
            k.get(w.start..w.end)
                .map(<[String]>::to_vec)
                .unwrap_or_default()
        })
    };

    // New content arrived while the person was scrolled up: offer "jump to latest".
    let behind = RwSignal::new(false);
    let follow = move || {
        if stick.try_get_value().unwrap_or(false) {
            request_animation_frame(move || {
                // The person may have scrolled up since this was scheduled: only follow if not.
                if stick.try_get_value().unwrap_or(false)
                    && let Some(el) = scroller.try_get_untracked().flatten()
                {
                    dom::scroll_to_bottom(&el);
                }
            });
        }
    };
    // Goes to the end and sticks there: the window is moved first so the last rows are in the
    // DOM, then the scroller follows as they are measured.
    let jump_to_end = move || {
        stick.set_value(true);
        behind.set(false);
        if let Some(el) = scroller.get_untracked() {
            dom::scroll_to_bottom(&el);
        }
        let end = window.with_untracked(|w| w.total) - viewport_h.get_untracked();
        scroll_top.set(end.max(0.0));
        follow();
    };
    // Follow the bottom when rows are added or grow (streaming), if the person is at the bottom.
    let seen_rev = StoredValue::new(0u64);
    Effect::new(move |_| {
        window.with(|w| w.total);
        let rev = session.with(|s| s.rev());
        let grew = rev != seen_rev.get_value();
        seen_rev.set_value(rev);
        if stick.get_value() {
            follow();
        } else if grew {
            behind.set(true);
        }
    });
    // The person sent a message: show it, wherever they were scrolled.
    Effect::new(move |prev: Option<u64>| {
        let n = store.scroll_to_end.get();
        if prev.is_some_and(|p| p != n) {
            jump_to_end();
        }
        n
    });
    let last_top = StoredValue::new(0.0f64);
    // When the person last wheeled up, touched, pressed a key that scrolls up or grabbed the scrollbar. Only a move up
    // that follows such input unsticks: the browser also moves the scroll position (clamping when
    // rows are replaced and the content is briefly shorter, scroll anchoring), and those must not
    // stop the transcript from following the stream.
    let intent_at = StoredValue::new(f64::NEG_INFINITY);
    let mark_intent = move || intent_at.set_value(dom::now_ms());
    let measure_viewport = move || {
        if let Some(el) = scroller.get_untracked() {
            let (top, sh, ch) = dom::scroll_metrics(&el);
            if top + ch >= sh - 48.0 {
                stick.set_value(true);
                if behind.get_untracked() {
                    behind.set(false);
                }
            } else if top < last_top.get_value() - 2.0
                && dom::now_ms() - intent_at.get_value() < USER_SCROLL_WINDOW_MS
            {
                stick.set_value(false);
            }
            last_top.set_value(top);
            scroll_top.set(top);
            viewport_h.set(ch.max(200.0));
        }
    };
    Effect::new(move |_| {
        if scroller.get().is_some() {
            measure_viewport();
        }
    });
    let resize = window_event_listener(leptos::ev::resize, move |_| {
        let was = stick.get_value();
        measure_viewport();
        stick.set_value(was);
        follow();
    });
    on_cleanup(move || resize.remove());
    // Keyboard scrolling reaches the transcript without focus being on it (the browser scrolls the
    // last clicked scroller), so the navigation keys count wherever they are pressed — except in a
    // text field, where they move the caret.
    let scroll_keys = window_event_listener(leptos::ev::keydown, move |ev| {
        let key = ev.key();
        let up =
            matches!(key.as_str(), "PageUp" | "ArrowUp" | "Home") || (key == " " && ev.shift_key());
        if up && !dom::is_text_entry(ev.target()) {
            mark_intent();
        }
    });
    on_cleanup(move || scroll_keys.remove());

    view! {
        <div class="transcript-wrap">
        <div
            class="transcript"
            data-testid="transcript"
            role="log"
            aria-label="Transcript"
            tabindex="0"
            node_ref=scroller
            on:scroll=move |_| measure_viewport()
            on:wheel=move |ev| {
                if ev.delta_y() < 0.0 {
                    mark_intent();
                }
            }
            on:touchmove=move |_| mark_intent()
            on:pointerdown=move |_| mark_intent()
        >
            <div class="transcript-inner">
                <div class="spacer" aria-hidden="true" style=move || format!("height:{}px", window.with(|w| w.pad_top))></div>
                <For each=visible key=|k| k.clone() let:k>
                    <TranscriptRow row_key=k />
                </For>
                <div class="spacer" aria-hidden="true" style=move || format!("height:{}px", window.with(|w| w.pad_bottom))></div>
                {move || {
                    keys.with(|k| k.is_empty()).then(|| view! {
                        <div class="empty-transcript">"No messages yet."</div>
                    })
                }}
            </div>
        </div>
        {move || behind.get().then(|| view! {
            <button
                type="button"
                class="jump-latest"
                data-testid="jump-to-latest"
                aria-label="Jump to the latest message"
                on:click=move |_| jump_to_end()
            >
                "↓ Jump to latest"
            </button>
        })}
        </div>
    }
}
