//! The static shell of index.html (`#boot-shell`): it paints the list's frame and "Loading
//! sessions…" before the wasm has loaded, covering the page, and is removed once the console's
//! first real screen is rendered underneath — the session list with its sessions, the sign-in
//! screen, or why the relay cannot be reached — so the page goes from the shell to the app without
//! an empty or half-built frame in between.
//!
//! For a signed-in browser the relay fills the shell's list with the person's sessions and adds the
//! same data as an inert JSON block (`#boot-data`, see `crates/relay/src/http/first_screen.rs`): the
//! console starts from it ([`take_data`]) instead of waiting for `GET /v1/me` and the list, and
//! reads both again right after. An entry tapped before the console runs was opened by the page's
//! inline script (the URL names the session), so the console opens it as a deep link.
//!
//! A browser the relay cannot recognise from its navigation (a first visit through a `#login=`
//! link, or a returning one whose service worker is gone) gets the same list from index.html's boot
//! script: it signs in with the link's code itself (the outcome is `window.__bridgeLogin`, which the
//! console awaits instead of using the single-use code again, see `net::login_from_page`) or takes
//! the stored login secret, asks the relay for the page with the secret, and moves the rendered
//! list and `#boot-data` into the shell — unless the console has started by then ([`STARTED_ATTR`]).

use serde_json::Value;

use crate::net::{Me, SessionSummary};

/// The shell's element id in index.html.
pub const SHELL_ID: &str = "boot-shell";

/// The boot data's element id in index.html (present only in a page the relay pre-rendered).
pub const DATA_ID: &str = "boot-data";

/// How long after sign-in the shell waits for the session list before it gives way anyway (a list
/// that fails to load must not leave the page covered).
pub const LIST_WAIT_MS: i32 = 4000;

/// What the relay put in the page: the answers of `GET /v1/me` and `GET /v1/code/sessions`.
#[derive(Clone, Debug, PartialEq)]
pub struct BootData {
    /// Who is signed in.
    pub me: Me,
    /// The session list, as the relay lists it (archived sessions with a kept worktree too).
    pub sessions: Vec<SessionSummary>,
    /// The prompts the session the page's path names waits on (`/s/<id>`, what a notification
    /// opens), shown before that session has loaded.
    pub prompts: Option<crate::store::Waiting>,
}

/// Reads the boot data block's text: `{"me": …, "sessions": {"sessions": […]}, "prompts": …}`
/// (`prompts` optional); `None` if it does not fit (the console then asks the relay, as without it).
pub fn parse_data(text: &str) -> Option<BootData> {
    let v: Value = serde_json::from_str(text).ok()?;
    let me = serde_json::from_value(v.get("me")?.clone()).ok()?;
    let list: bridge_protocol::api::SessionList =
        serde_json::from_value(v.get("sessions")?.clone()).ok()?;
    Some(BootData {
        me,
        sessions: list.sessions,
        prompts: v.get("prompts").and_then(crate::store::Waiting::from_boot),
    })
}

/// The attribute [`take_data`] sets on the shell: from then on the page's boot script no longer
/// fills the shell's list (a list arriving after the console has started is the console's to show).
pub const STARTED_ATTR: &str = "data-console";

/// Takes the boot data out of the page (read once; the element is removed), and marks the shell as
/// the console's.
pub fn take_data() -> Option<BootData> {
    let doc = web_sys::window()?.document()?;
    if let Some(shell) = doc.get_element_by_id(SHELL_ID) {
        let _ = shell.set_attribute(STARTED_ATTR, "");
    }
    let el = doc.get_element_by_id(DATA_ID)?;
    let text = el.text_content();
    el.remove();
    parse_data(&text?)
}

/// Removes the static shell (later calls do nothing). Keyboard focus on one of its entries moves
/// to the console's entry for the same session.
pub fn done() {
    use wasm_bindgen::JsCast as _;
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Some(el) = doc.get_element_by_id(SHELL_ID) else {
        return;
    };
    let focused = doc
        .active_element()
        .filter(|a| el.contains(Some(a)))
        .and_then(|a| a.closest("[data-session-id]").ok().flatten())
        .and_then(|li| li.get_attribute("data-session-id"));
    el.remove();
    let Some(id) = focused else { return };
    let Ok(items) = doc.query_selector_all("[data-testid=\"session-item\"]") else {
        return;
    };
    for i in 0..items.length() {
        let Some(item) = items
            .item(i)
            .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
        else {
            continue;
        };
        if item.get_attribute("data-session-id").as_deref() == Some(id.as_str())
            && let Ok(Some(link)) = item.query_selector("a")
            && let Ok(link) = link.dyn_into::<web_sys::HtmlElement>()
        {
            let _ = link.focus();
            return;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_data_reads_what_the_two_calls_answer() {
        let text = r#"{"me":{"role":"controller","session_id":null},
            "sessions":{"sessions":[{"id":"cse_a","state":"idle","title":"\u003cimg\u003e"},{"nope":1}]}}"#;
        let data = parse_data(text).unwrap();
        assert_eq!(data.me.role, "controller");
        assert_eq!(
            data.sessions.len(),
            1,
            "an entry that does not fit is skipped"
        );
        assert_eq!(data.sessions[0].title.as_deref(), Some("<img>"));
        assert_eq!(parse_data("{}"), None);
        assert_eq!(parse_data("not json"), None);
    }
}
