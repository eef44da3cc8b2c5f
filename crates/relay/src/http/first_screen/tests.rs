use bridge_protocol::SessionState;
use bridge_protocol::api::{SessionList, SessionSummary};
use serde_json::{Value, json};

use super::*;

const TEMPLATE: &str = "<body><div id=\"boot-shell\"><nav class=\"session-list\"><div class=\"list-head\"></div>\
    <p class=\"boot-status\" role=\"status\" id=\"boot-list\">Loading sessions…</p></nav></div>\
    <script>tap()</script></body>";

const HOSTILE: &str = "<img src=x onerror=alert(1)></script><!--\"'&";

fn list() -> SessionList {
    let mut a = SessionSummary::new("cse_a", SessionState::RequiresAction);
    a.title = Some(HOSTILE.into());
    a.cwd = Some("/tmp/\"q\"".into());
    a.pending_permissions = 1;
    a.last_activity_at = Some("2026-11-30T03:55:00Z".into());
    a.extra.insert("host".into(), "<b>node</b>".into());
    let b = SessionSummary::new("cse b/1", SessionState::Idle);
    let mut gone = SessionSummary::new("cse_gone", SessionState::Ended);
    gone.archived = true;
    gone.worktree_kept = Some("uncommitted changes".into());
    SessionList {
        sessions: vec![a, b, gone],
    }
}

fn now() -> f64 {
    bridge_protocol::api::parse_iso_ms("2026-11-30T04:00:00Z").unwrap()
}

/// The text of the boot data block of `page`.
fn data_block(page: &str) -> &str {
    let open = "<script type=\"application/json\" id=\"boot-data\">";
    let start = page.find(open).unwrap() + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    &page[start..end]
}

#[test]
fn the_list_is_rendered_escaped_with_the_data_beside_it() {
    let me = json!({"role": "controller", "session_id": null});
    let page = render(TEMPLATE, &me, &list(), false, now()).unwrap();
    // The status line is replaced; the rest of the template is kept.
    assert!(!page.contains("Loading sessions"), "{page}");
    assert!(page.starts_with(
        "<body><div id=\"boot-shell\"><nav class=\"session-list\"><div class=\"list-head\"></div>"
    ));
    assert!(page.ends_with("</nav></div><script>tap()</script></body>"));
    // Hostile text shows as text: no tag, comment or attribute comes out of it.
    assert!(
        !page.contains("<img") && !page.contains("<!--") && !page.contains("<b>"),
        "{page}"
    );
    assert!(page.contains(
        "<span class=\"session-name\" title=\"&lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;&lt;!--&quot;&#39;&amp;\">"
    ));
    assert!(page.contains("title=\"/tmp/&quot;q&quot;\">/tmp/&quot;q&quot;</span>"));
    assert!(
        page.contains("on &lt;b&gt;node&lt;/b&gt;</span> · 1 waiting · 5m ago"),
        "{page}"
    );
    // What the console's list shows: live sessions in order, state, links to their URLs.
    let items: Vec<_> = page
        .match_indices("data-testid=\"boot-session-item\"")
        .collect();
    assert_eq!(items.len(), 2, "the archived session is not listed");
    assert!(page.contains("data-session-id=\"cse_a\" data-state=\"requires_action\""));
    assert!(page.contains("<span class=\"badge state-requires_action\">requires action</span>"));
    assert!(page.contains("<a href=\"/s/cse%20b%2F1\" data-boot-item>"));
    assert!(page.contains("Needs you (1)"));
    // Exactly one `</script>` more than the template: the data block's own.
    assert_eq!(page.matches("</script>").count(), 2);
    let data: Value = serde_json::from_str(data_block(&page)).unwrap();
    assert_eq!(data["me"], me);
    assert_eq!(data["sessions"], serde_json::to_value(list()).unwrap());
    assert_eq!(data["sessions"]["sessions"][0]["title"], HOSTILE);
}

#[test]
fn the_data_block_cannot_close_its_element() {
    let json = json!({"t": "</script><script>alert(1)</script><!-- & -->"}).to_string();
    let safe = script_safe_json(&json);
    assert!(
        !safe.contains('<') && !safe.contains('>') && !safe.contains('&'),
        "{safe}"
    );
    assert_eq!(
        serde_json::from_str::<Value>(&safe).unwrap(),
        serde_json::from_str::<Value>(&json).unwrap()
    );
}

#[test]
fn needs_you_shows_the_waiting_sessions_and_an_empty_list_says_so() {
    let me = json!({"role": "controller", "session_id": null});
    let page = render(TEMPLATE, &me, &list(), true, now()).unwrap();
    assert_eq!(page.matches("data-testid=\"boot-session-item\"").count(), 1);
    assert!(page.contains("aria-pressed=\"false\">All</button><button class=\"chip-button\" aria-pressed=\"true\">Needs you (1)"));
    let empty = SessionList::default();
    let page = render(TEMPLATE, &me, &empty, false, now()).unwrap();
    assert!(page.contains("<p class=\"muted empty\">No sessions yet.</p>"));
    let page = render(TEMPLATE, &me, &empty, true, now()).unwrap();
    assert!(page.contains("No session waits for you."));
}

#[test]
fn a_template_without_the_marker_is_not_rendered() {
    let me = json!({});
    assert_eq!(
        render("<body>no shell</body>", &me, &list(), false, now()),
        None
    );
}

#[test]
fn only_console_pages_with_the_login_secret_are_candidates() {
    let mut h = HeaderMap::new();
    h.insert(header::COOKIE, "bridge_session=x".parse().unwrap());
    h.insert(crate::core::auth::LOGIN_SECRET_HEADER, "s".parse().unwrap());
    let uri = |u: &str| u.parse::<axum::http::Uri>().unwrap();
    for ok in [
        "/",
        "/index.html",
        "/s/cse_1",
        "/?view=needs-you",
        "/s/x?theme=dark",
    ] {
        assert!(candidate(&Method::GET, &uri(ok), &h), "{ok}");
    }
    assert!(candidate(&Method::HEAD, &uri("/"), &h));
    assert!(!candidate(&Method::POST, &uri("/"), &h));
    for no in [
        "/sw.js",
        "/styles.css",
        "/?embed",
        "/?embed=1",
        "/?controls=observer",
        "/v1/me",
    ] {
        assert!(!candidate(&Method::GET, &uri(no), &h), "{no}");
    }
    let mut bearer = h.clone();
    bearer.insert(header::AUTHORIZATION, "Bearer t".parse().unwrap());
    assert!(!candidate(&Method::GET, &uri("/"), &bearer));
    let mut no_secret = h.clone();
    no_secret.remove(crate::core::auth::LOGIN_SECRET_HEADER);
    assert!(!candidate(&Method::GET, &uri("/"), &no_secret));
    let mut no_cookie = h;
    no_cookie.remove(header::COOKIE);
    assert!(!candidate(&Method::GET, &uri("/"), &no_cookie));
}
