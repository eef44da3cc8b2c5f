//! The static shell of index.html (`#boot-shell`): it paints the list's frame and "Loading
//! sessions…" before the wasm has loaded, covering the page, and is removed once the console's
//! first real screen is rendered underneath — the session list with its sessions, the sign-in
//! screen, or why the relay cannot be reached — so the page goes from the shell to the app without
//! an empty or half-built frame in between.

/// The shell's element id in index.html.
pub const SHELL_ID: &str = "boot-shell";

/// How long after sign-in the shell waits for the session list before it gives way anyway (a list
/// that fails to load must not leave the page covered).
pub const LIST_WAIT_MS: i32 = 4000;

/// Removes the static shell (later calls do nothing).
pub fn done() {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(SHELL_ID))
    {
        el.remove();
    }
}

/// Removes the shell after [`LIST_WAIT_MS`] unless it is gone by then.
pub fn done_later() {
    use wasm_bindgen::JsCast as _;
    let Some(window) = web_sys::window() else {
        return;
    };
    let cb = wasm_bindgen::closure::Closure::once_into_js(done);
    let _ = window
        .set_timeout_with_callback_and_timeout_and_arguments_0(cb.unchecked_ref(), LIST_WAIT_MS);
}
