//! The URL names the session: `/s/<id>`, and which sessions the list shows: `?view=needs-you`
//! (the installed app's "Needs you" shortcut). A tiny router over the History API.

use leptos::prelude::*;

use crate::dom;
use crate::net::SessionSummary;

/// The session id in a path (`/s/<id>`), if any.
pub fn session_from_path(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/s/")?;
    let id = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let id = percent_decode(id);
    (!id.is_empty()).then_some(id)
}

/// The path of a session.
pub fn session_path(id: &str) -> String {
    format!("/s/{}", crate::net::enc(id))
}

/// Decodes `%XX` escapes (invalid ones are kept as they are; bytes that are not UTF-8 become U+FFFD).
pub fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// Which sessions the list shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ListView {
    /// Every session.
    #[default]
    All,
    /// Only sessions waiting for an answer (`?view=needs-you`).
    NeedsYou,
}

impl ListView {
    /// The view a query string (`location.search`) names.
    pub fn from_search(search: &str) -> Self {
        let wants = search
            .trim_start_matches('?')
            .split('&')
            .any(|kv| kv == "view=needs-you");
        if wants {
            ListView::NeedsYou
        } else {
            ListView::All
        }
    }

    /// Its query string (with `?`, or empty).
    pub fn search(self) -> &'static str {
        match self {
            ListView::All => "",
            ListView::NeedsYou => "?view=needs-you",
        }
    }

    /// The sessions of `list` this view shows, in order.
    pub fn filter(self, list: &[SessionSummary]) -> Vec<SessionSummary> {
        list.iter()
            .filter(|s| self == ListView::All || crate::pwa::waits_for_answer(s))
            .cloned()
            .collect()
    }
}

/// The router handle (context).
#[derive(Clone, Copy)]
pub struct Nav {
    /// The open session (from the URL).
    pub session: RwSignal<Option<String>>,
    /// Which sessions the list shows (from the URL's query).
    pub view: RwSignal<ListView>,
}

impl Nav {
    /// A router showing `session` and every session in the list, not tied to the URL (tests).
    pub fn new(session: Option<String>) -> Self {
        Nav {
            session: RwSignal::new(session),
            view: RwSignal::new(ListView::All),
        }
    }

    /// Reads the current URL and follows the back/forward buttons.
    pub fn install() -> Self {
        let nav = Nav {
            session: RwSignal::new(session_from_path(&dom::location_path())),
            view: RwSignal::new(ListView::from_search(&dom::location_search())),
        };
        let handle = window_event_listener(leptos::ev::popstate, move |_| nav.sync_from_url());
        on_cleanup(move || handle.remove());
        provide_context(nav);
        nav
    }

    /// The router from context.
    pub fn expect() -> Self {
        expect_context::<Nav>()
    }

    /// Reads the session and the view from the address bar (after back/forward, or after something
    /// else changed it: a notification's click).
    pub fn sync_from_url(&self) {
        let session = session_from_path(&dom::location_path());
        if self.session.with_untracked(|s| *s != session) {
            self.session.set(session);
        }
        let view = ListView::from_search(&dom::location_search());
        if self.view.get_untracked() != view {
            self.view.set(view);
        }
    }

    /// Opens `path` (`/s/<id>`, `/`, with a query), adding a history entry.
    pub fn open_path(&self, path: &str) {
        let here = format!("{}{}", dom::location_path(), dom::location_search());
        if here != path {
            dom::push_url(path);
        }
        self.sync_from_url();
    }

    /// Opens a session (or the list with `None`), adding a history entry. The list's view stays.
    pub fn go(&self, id: Option<&str>) {
        let path = id.map_or_else(|| "/".to_string(), session_path);
        let url = format!("{path}{}", self.view.get_untracked().search());
        if format!("{}{}", dom::location_path(), dom::location_search()) != url {
            dom::push_url(&url);
        }
        self.session.set(id.map(str::to_string));
    }

    /// Shows every session, or only those waiting for an answer (replaces the URL's query).
    pub fn set_view(&self, view: ListView) {
        dom::replace_url(&format!("{}{}", dom::location_path(), view.search()));
        self.view.set(view);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::summary;

    #[test]
    fn paths_round_trip() {
        assert_eq!(session_from_path("/s/abc-123"), Some("abc-123".into()));
        assert_eq!(session_from_path("/s/abc/extra"), Some("abc".into()));
        assert_eq!(session_from_path("/s/"), None);
        assert_eq!(session_from_path("/"), None);
        assert_eq!(
            session_from_path(&session_path("a b/c")),
            Some("a b/c".into())
        );
        assert_eq!(percent_decode("%zz%41"), "%zzA");
        assert_eq!(percent_decode("100%"), "100%");
    }

    #[test]
    fn the_needs_you_view_keeps_sessions_waiting_for_an_answer() {
        assert_eq!(ListView::from_search("?view=needs-you"), ListView::NeedsYou);
        assert_eq!(
            ListView::from_search("?utm=x&view=needs-you"),
            ListView::NeedsYou
        );
        assert_eq!(ListView::from_search(""), ListView::All);
        assert_eq!(ListView::from_search("?view=needs-youx"), ListView::All);
        assert_eq!(ListView::from_search("?view=all"), ListView::All);
        for v in [ListView::All, ListView::NeedsYou] {
            assert_eq!(ListView::from_search(v.search()), v);
        }
        let list = vec![
            summary("idle", "idle", 0),
            summary("asks", "requires_action", 1),
            summary("running-with-prompt", "running", 2),
            summary("ended", "ended", 0),
            summary("question", "requires_action", 0),
        ];
        let ids = |v: Vec<SessionSummary>| v.into_iter().map(|s| s.id).collect::<Vec<_>>();
        assert_eq!(
            ids(ListView::NeedsYou.filter(&list)),
            ["asks", "running-with-prompt", "question"]
        );
        assert_eq!(ids(ListView::All.filter(&list)).len(), 5);
    }
}
