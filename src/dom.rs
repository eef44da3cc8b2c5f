//! The little browser glue the components need (URL, title, viewport, measuring rows, focus),
//! kept in one place so components stay declarative.

use std::rc::Rc;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

/// `location.hash` (with its `#`), or empty.
pub fn location_hash() -> String {
    window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

/// `location.pathname`.
pub fn location_path() -> String {
    window()
        .and_then(|w| w.location().pathname().ok())
        .unwrap_or_else(|| "/".into())
}

/// Replaces the current URL (no history entry); used to drop the `#login=` fragment.
pub fn replace_url(url: &str) {
    if let Some(h) = window().and_then(|w| w.history().ok()) {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(url));
    }
}

/// Pushes a URL (a new history entry).
pub fn push_url(url: &str) {
    if let Some(h) = window().and_then(|w| w.history().ok()) {
        let _ = h.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(url));
    }
}

/// Sets `document.title`.
pub fn set_title(title: &str) {
    if let Some(d) = window().and_then(|w| w.document())
        && d.title() != title
    {
        d.set_title(title);
    }
}

/// `performance.now()` in ms.
pub fn now_ms() -> f64 {
    window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Keeps the CSS variable `--kb-inset` on `<html>` equal to the height the on-screen keyboard
/// covers (from `visualViewport`), so the composer can sit above it on phones.
pub fn install_keyboard_inset() {
    let Some(w) = window() else { return };
    let Some(vv) = w.visual_viewport() else {
        return;
    };
    let update = {
        let w = w.clone();
        let vv = vv.clone();
        move || {
            let inner = w
                .inner_height()
                .ok()
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0);
            let inset = (inner - vv.height() - vv.offset_top()).max(0.0);
            if let Some(root) = w.document().and_then(|d| d.document_element())
                && let Ok(el) = root.dyn_into::<web_sys::HtmlElement>()
            {
                let _ = el
                    .style()
                    // Whole pixels, rounded as `{:.0}` would (half to even), without pulling
                    // float formatting into the main module.
                    .set_property(
                        "--kb-inset",
                        &format!("{}px", inset.round_ties_even() as i64),
                    );
            }
        }
    };
    update();
    let cb = Closure::<dyn Fn()>::new(update);
    let _ = vv.add_event_listener_with_callback("resize", cb.as_ref().unchecked_ref());
    let _ = vv.add_event_listener_with_callback("scroll", cb.as_ref().unchecked_ref());
    cb.forget();
}

/// Measures rows: one `ResizeObserver` for all mounted rows, reporting `(data-key, height)`.
/// A row removed from the DOM is unobserved on its last (zero-size) report, so nothing leaks.
pub struct RowObserver {
    observer: Option<web_sys::ResizeObserver>,
    _callback: Closure<dyn Fn(js_sys::Array, web_sys::ResizeObserver)>,
}

impl RowObserver {
    /// Calls `on_size(key, height)` whenever an observed row's size changes.
    pub fn new(on_size: Rc<dyn Fn(String, f64)>) -> Self {
        let callback = Closure::<dyn Fn(js_sys::Array, web_sys::ResizeObserver)>::new(
            move |entries: js_sys::Array, observer: web_sys::ResizeObserver| {
                for entry in entries.iter() {
                    let Ok(entry) = entry.dyn_into::<web_sys::ResizeObserverEntry>() else {
                        continue;
                    };
                    let target = entry.target();
                    if !target.is_connected() {
                        observer.unobserve(&target);
                        continue;
                    }
                    if let Some(key) = target.get_attribute("data-key") {
                        on_size(key, target.get_bounding_client_rect().height());
                    }
                }
            },
        );
        let observer = web_sys::ResizeObserver::new(callback.as_ref().unchecked_ref()).ok();
        RowObserver {
            observer,
            _callback: callback,
        }
    }

    /// Starts measuring an element (it must carry `data-key`).
    pub fn observe(&self, el: &web_sys::Element) {
        if let Some(o) = &self.observer {
            o.observe(el);
        }
    }
}

impl Drop for RowObserver {
    fn drop(&mut self) {
        if let Some(o) = &self.observer {
            o.disconnect();
        }
    }
}

/// `location.search` (with its `?`), or empty.
pub fn location_search() -> String {
    window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default()
}

const FOCUSABLE: &str = "button:not([disabled]), [href], input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex='-1'])";

fn focusables(container: &web_sys::Element) -> Vec<web_sys::HtmlElement> {
    let Ok(list) = container.query_selector_all(FOCUSABLE) else {
        return vec![];
    };
    (0..list.length())
        .filter_map(|i| list.item(i))
        .filter_map(|n| n.dyn_into::<web_sys::HtmlElement>().ok())
        .collect()
}

/// Focuses the element matching `selector` in `container`, else its first focusable element.
pub fn focus_in(container: &web_sys::Element, selector: &str) {
    let target = container
        .query_selector(selector)
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        .or_else(|| focusables(container).into_iter().next());
    if let Some(t) = target {
        let _ = t.focus();
    }
}

/// Focuses the first element of the document matching `selector`, if any (returning the focus to
/// what opened a dialog).
pub fn focus_selector(selector: &str) {
    if let Some(el) = window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(selector).ok().flatten())
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

/// Keeps Tab / Shift+Tab inside `container` (a modal dialog's focus trap).
pub fn trap_tab(container: &web_sys::Element, ev: &web_sys::KeyboardEvent) {
    if ev.key() != "Tab" {
        return;
    }
    let items = focusables(container);
    let (Some(first), Some(last)) = (items.first(), items.last()) else {
        return;
    };
    let active = window()
        .and_then(|w| w.document())
        .and_then(|d| d.active_element());
    let inside = active.as_ref().is_some_and(|a| container.contains(Some(a)));
    let at = |e: &web_sys::HtmlElement| {
        active
            .as_ref()
            .is_some_and(|a| a == e.unchecked_ref::<web_sys::Element>())
    };
    if ev.shift_key() && (at(first) || !inside) {
        ev.prevent_default();
        let _ = last.focus();
    } else if !ev.shift_key() && (at(last) || !inside) {
        ev.prevent_default();
        let _ = first.focus();
    }
}

/// `scrollTop` / `scrollHeight` / `clientHeight` of an element.
pub fn scroll_metrics(el: &web_sys::Element) -> (f64, f64, f64) {
    (
        el.scroll_top() as f64,
        el.scroll_height() as f64,
        el.client_height() as f64,
    )
}

/// Whether an event target takes typed text (input, textarea, select, contenteditable): keys there
/// edit, they do not scroll the page.
pub fn is_text_entry(target: Option<web_sys::EventTarget>) -> bool {
    let Some(el) = target.and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) else {
        return false;
    };
    matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT") || el.is_content_editable()
}

/// Scrolls an element to its bottom.
pub fn scroll_to_bottom(el: &web_sys::Element) {
    el.set_scroll_top(el.scroll_height());
}

/// Number of elements under `root` (for the DOM-size benchmark).
pub fn count_elements(root: &web_sys::Element) -> u32 {
    root.query_selector_all("*")
        .map(|l| l.length())
        .unwrap_or(0)
}

/// Whether the page is hidden (background tab, minimized, phone locked).
pub fn page_hidden() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .is_some_and(|d| d.hidden())
}

/// The window's inner width in CSS px (a wide default without a window).
pub fn viewport_width() -> f64 {
    web_sys::window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|v| v.as_f64())
        .unwrap_or(1280.0)
}
