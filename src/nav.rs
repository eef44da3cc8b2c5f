//! The URL names the session: `/s/<id>`. A tiny router over the History API.

use leptos::prelude::*;

use crate::dom;

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

/// Decodes `%XX` escapes (invalid ones are kept as they are).
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(v) = u8::from_str_radix(hex, 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The router handle (context).
#[derive(Clone, Copy)]
pub struct Nav {
    /// The open session (from the URL).
    pub session: RwSignal<Option<String>>,
}

impl Nav {
    /// Reads the current URL and follows the back/forward buttons.
    pub fn install() -> Self {
        let nav = Nav {
            session: RwSignal::new(session_from_path(&dom::location_path())),
        };
        let handle = window_event_listener(leptos::ev::popstate, move |_| {
            nav.session.set(session_from_path(&dom::location_path()));
        });
        on_cleanup(move || handle.remove());
        provide_context(nav);
        nav
    }

    /// The router from context.
    pub fn expect() -> Self {
        expect_context::<Nav>()
    }

    /// Opens a session (or the list with `None`), adding a history entry.
    pub fn go(&self, id: Option<&str>) {
        let path = id.map_or_else(|| "/".to_string(), session_path);
        if dom::location_path() != path {
            dom::push_url(&path);
        }
        self.session.set(id.map(str::to_string));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
