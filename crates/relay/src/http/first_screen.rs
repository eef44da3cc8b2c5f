//! The first screen, rendered into `index.html` for a signed-in browser (issue 12): the boot
//! shell's session list filled with the person's sessions, so a phone paints its list before the
//! console's wasm has arrived, plus the same data as an inert JSON block (`#boot-data`: what
//! `GET /v1/me` and `GET /v1/code/sessions?kept_worktrees=1` answer) that the console starts from
//! instead of asking (it reads both again right after).
//!
//! Only for a navigation that carries the login cookie **and** its login secret
//! (`X-Bridge-Login`, which the service worker adds from the secret the console mirrored for it):
//! the cookie alone is refused everywhere (another server on this host receives it too), and a
//! token in the URL is never used. A controller only: an observer's credentials, a bearer token,
//! the `embed` / `controls` switches in the query, anything that does not authenticate, or a page
//! without the shell's `#boot-list` marker get today's static page. The page is per person:
//! `Cache-Control: no-store`, `Vary: Cookie, X-Bridge-Login`, compressed per request (never the
//! static files' precompressed copies). Everything from a session (titles are model or user text)
//! is HTML-escaped; in the JSON block `<`, `>` and `&` are `\u` escapes, so nothing in it can close
//! the `<script>` element.
//!
//! The login answer carries the same first screen when asked (`X-Bridge-First-Screen`, sent by
//! index.html's first-visit boot script), so a first visit needs no second fetch of the page:
//! [`for_principal`] renders it for both, with the same rules.

use std::sync::Arc;
use std::time::SystemTime;

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::response::Response;
use bridge_protocol::api::{ListEntry, SessionList, waits_for_answer};
use serde_json::{Value, json};

use crate::core::auth::Principal;
use crate::edge::assets::{compress_page, negotiate};
use crate::edge::external::External;
use crate::edge::extract::AppState;

/// The element of the boot shell the list replaces (`<p … id="boot-list">Loading sessions…</p>`).
const MARKER: &str = "id=\"boot-list\"";

/// The console's `index.html`, as read at start (see `assets::Console`).
pub struct Template {
    html: Option<Arc<str>>,
}

impl Template {
    /// The console's `index.html`, as read at start.
    pub fn new(html: Option<Arc<str>>) -> Arc<Self> {
        Arc::new(Template { html })
    }

    fn get(&self) -> Option<Arc<str>> {
        self.html.clone()
    }
}

/// Whether the request may get a pre-rendered page, before anything is looked up: a GET or HEAD of
/// a console page (`/`, `/index.html`, `/s/<id>`) with the login cookie's secret, no bearer token
/// and no `embed` / `controls` switch in the query.
fn candidate(method: &Method, uri: &axum::http::Uri, headers: &HeaderMap) -> bool {
    let page = matches!(uri.path(), "/" | "/index.html") || uri.path().starts_with("/s/");
    let switches = uri.query().unwrap_or_default().split('&').any(|kv| {
        let key = kv.split('=').next().unwrap_or_default();
        matches!(key, "embed" | "controls")
    });
    (method == Method::GET || method == Method::HEAD)
        && page
        && !switches
        && !headers.contains_key(header::AUTHORIZATION)
        && headers.contains_key(crate::core::auth::LOGIN_SECRET_HEADER)
        && headers.contains_key(header::COOKIE)
}

/// The pre-rendered page for this request, or `None` for the static one.
pub async fn respond(app: &AppState, template: &Template, req: &Parts) -> Option<Response> {
    if !candidate(&req.method, &req.uri, &req.headers) {
        return None;
    }
    let ext = req.extensions.get::<External>()?;
    let who = match app.authenticate(&req.headers, ext) {
        Ok(who) => who,
        Err(e) => {
            tracing::debug!(error = %e.message, "first screen: not signed in");
            return None;
        }
    };
    let html = template.get()?;
    // Checked before the sessions are read: a page without the shell's marker gets nothing.
    let (start, end) = list_span(&html)?;
    let needs_you = req
        .uri
        .query()
        .is_some_and(|q| q.split('&').any(|kv| kv == "view=needs-you"));
    let open = req
        .uri
        .path()
        .strip_prefix("/s/")
        .filter(|id| !id.is_empty() && !id.contains('/'));
    let screen = for_principal(app, &who, needs_you, open).await?;
    let page = format!("{}{screen}{}", &html[..start], &html[end..]);
    Some(page_response(&req.method, &req.headers, page))
}

/// What `/v1/me` answers (and the first screen carries): the role and the session it is scoped to.
pub(super) fn me_json(who: &Principal) -> Value {
    serde_json::to_value(bridge_protocol::api::Me {
        role: who.role.as_str().to_owned(),
        session_id: who.session_scope.clone(),
    })
    .unwrap_or_default()
}

/// The first screen for `who` — the list's markup and the `#boot-data` block that go where the
/// boot shell's `#boot-list` placeholder is (see [`fragment`]) — or `None` when `who` does not get
/// one (an observer, a session-scoped login, a list that cannot be read). The page's pre-render
/// and the login answer (`X-Bridge-First-Screen`, for the first visit's boot script) both take it
/// from here. `open` is the session the page's path names (`/s/<id>`): its prompts waiting for a
/// person go in the boot data too ([`waiting_prompts`]).
pub async fn for_principal(
    app: &AppState,
    who: &Principal,
    needs_you: bool,
    open: Option<&str>,
) -> Option<String> {
    if !who.can_write() || who.session_scope.is_some() {
        return None;
    }
    let sessions = session_list(app, who).await?;
    let me = me_json(who);
    let now_ms = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_millis() as f64);
    let prompts = open.and_then(|id| waiting_prompts(app, who, id));
    Some(fragment(&me, &sessions, needs_you, now_ms, prompts))
}

/// At most this many bytes of waiting prompts go in a page (a `Write` of a large file asks with
/// the whole file): a larger one is left to the session's history, as without them.
pub const PROMPTS_MAX_BYTES: usize = 256 * 1024;

/// The prompts a person answers (`can_use_tool`, `elicitation`, `request_user_dialog`) that the
/// session `id` is waiting on, as the CLI sent them (`control_request` frames, oldest first):
/// `{"session_id": id, "requests": [...]}`, or `None` when there are none, when `who` may not see
/// the session (the same rule as `GET /v1/code/sessions/{id}`) or when it runs on another node (a
/// scale-out gateway: the console then learns them from the history). A notification opens
/// `/s/<id>`; with these the console shows the dialog before the session's own code and history
/// have loaded. Who gets them: the controller whose page this is (`for_principal`'s rule); an
/// observer, a session-scoped login or a bearer token get no pre-rendered page at all.
pub fn waiting_prompts(app: &AppState, who: &Principal, id: &str) -> Option<Value> {
    let session = app.visible_session(who, id).ok()?;
    let mut used = 0;
    let requests: Vec<Value> = session
        .waiting_prompt_payloads()
        .iter()
        .take_while(|p| {
            used += p.len();
            used <= PROMPTS_MAX_BYTES
        })
        .filter_map(|p| serde_json::from_slice(p).ok())
        .collect();
    (!requests.is_empty()).then(|| json!({ "session_id": id, "requests": requests }))
}

/// What `GET /v1/code/sessions?kept_worktrees=1` answers this principal (a scale-out gateway's
/// from its registry); `None` when it cannot be read (the static page then).
async fn session_list(app: &AppState, who: &Principal) -> Option<SessionList> {
    if let Some(cluster) = crate::cluster::Cluster::of(app)
        && cluster.serves_all()
    {
        return crate::cluster::session_list(&cluster, who, false, true)
            .await
            .ok();
    }
    Some(
        crate::features::transcripts::api::list(
            app,
            crate::core::relay::Archived::WorktreeKept,
            who,
        )
        .await,
    )
}

fn page_response(method: &Method, headers: &HeaderMap, page: String) -> Response {
    let encoding = negotiate(headers);
    let body = match encoding.and_then(|e| compress_page(page.as_bytes(), e)) {
        Some(b) => (encoding, b),
        None => (None, bytes::Bytes::from(page)),
    };
    let (encoding, body) = body;
    let len = body.len();
    let mut res = Response::new(if method == Method::HEAD {
        Body::empty()
    } else {
        Body::from(body)
    });
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::VARY,
        HeaderValue::from_static("cookie, x-bridge-login, accept-encoding"),
    );
    if let Some(e) = encoding {
        h.insert(header::CONTENT_ENCODING, e.header());
    }
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    res
}

/// `template` with its boot list filled from `sessions` (those `needs_you` shows, if set) and the
/// boot data after it; `None` when the template has no `#boot-list` element.
pub fn render(
    template: &str,
    me: &Value,
    sessions: &SessionList,
    needs_you: bool,
    now_ms: f64,
) -> Option<String> {
    let (start, end) = list_span(template)?;
    Some(format!(
        "{}{}{}",
        &template[..start],
        fragment(me, sessions, needs_you, now_ms, None),
        &template[end..]
    ))
}

/// Where the shell's `<p … id="boot-list">…</p>` placeholder sits in `template`.
fn list_span(template: &str) -> Option<(usize, usize)> {
    let at = template.find(MARKER)?;
    let start = template[..at].rfind('<')?;
    let end = at + template[at..].find("</p>")? + "</p>".len();
    Some((start, end))
}

/// What replaces the placeholder: the list's inert controls, the list (or its empty note) and the
/// `#boot-data` block (with the open session's waiting `prompts`, when given), everything from a
/// session escaped.
pub fn fragment(
    me: &Value,
    sessions: &SessionList,
    needs_you: bool,
    now_ms: f64,
    prompts: Option<Value>,
) -> String {
    let live: Vec<_> = sessions.sessions.iter().filter(|s| !s.archived).collect();
    let waiting = live.iter().filter(|s| waits_for_answer(s)).count();
    let kept = sessions.sessions.len() > live.len();
    let shown: Vec<_> = live
        .iter()
        .filter(|s| !needs_you || waits_for_answer(s))
        .collect();
    let mut out = String::with_capacity(400 * shown.len() + 1024);
    // Inert copies of the list's controls, so the entries sit where the console puts them.
    out.push_str(&format!(
        "<div class=\"list-filter\" role=\"group\" inert><button class=\"chip-button\" \
         aria-pressed=\"{}\">All</button><button class=\"chip-button\" aria-pressed=\"{}\">{}</button></div>\
         <div class=\"new-session\" inert><button class=\"primary wide\">+ New session</button></div>",
        !needs_you,
        needs_you,
        match waiting {
            0 => "Needs you".to_owned(),
            n => format!("Needs you ({n})"),
        }
    ));
    out.push_str(
        "<ul class=\"sessions\" role=\"list\" id=\"boot-list\" data-testid=\"boot-session-list\">",
    );
    for s in &shown {
        item(&mut out, s, now_ms);
    }
    out.push_str("</ul>");
    if shown.is_empty() {
        out.push_str(&format!(
            "<p class=\"muted empty\">{}</p>",
            match (needs_you, kept) {
                (true, _) => "No session waits for you.",
                (false, true) => "No live sessions.",
                (false, false) => "No sessions yet.",
            }
        ));
    }
    let mut data = json!({"me": me, "sessions": sessions});
    if let Some(p) = prompts {
        data["prompts"] = p;
    }
    let data = data.to_string();
    out.push_str("<script type=\"application/json\" id=\"boot-data\">");
    out.push_str(&script_safe_json(&data));
    out.push_str("</script>");
    out
}

/// One entry, as the console's `SessionItem` renders it (text from bridge-protocol's
/// [`ListEntry`]), linking to the session's URL; `data-boot-item` lets the page's inline script
/// open it before the console runs.
fn item(out: &mut String, s: &bridge_protocol::api::SessionSummary, now_ms: f64) {
    let e = ListEntry::of(s, now_ms);
    let id = escape(&s.id);
    let name = escape(&e.name);
    let state = escape(&e.state);
    out.push_str(&format!(
        "<li class=\"session-item\" data-testid=\"boot-session-item\" data-session-id=\"{id}\" \
         data-state=\"{state}\" data-origin=\"{}\" role=\"listitem\"><a href=\"/s/{}\" data-boot-item>\
         <span class=\"session-name\" title=\"{name}\">{name}</span>\
         <span class=\"badge state-{state}\">{}</span>",
        escape(&e.origin),
        escape(&bridge_protocol::api::path_segment(&s.id)),
        escape(&e.state_label),
    ));
    if e.from_terminal {
        out.push_str(
            "<span class=\"badge origin-cli\" title=\"Started with Claude Code in a terminal\">Terminal</span>",
        );
    }
    if let Some(f) = &e.fork_of {
        out.push_str(&format!(
            "<span class=\"session-fork\">{}</span>",
            escape(f)
        ));
    }
    let cwd = escape(&e.cwd);
    out.push_str(&format!(
        "<span class=\"session-cwd\" title=\"{cwd}\">{cwd}</span><span class=\"session-meta\">"
    ));
    if let Some(h) = &e.host {
        let h = escape(h);
        out.push_str(&format!(
            "<span class=\"session-host\" title=\"Runs on the host {h}\">on {h}</span>{}",
            if e.meta.is_empty() { "" } else { " · " }
        ));
    }
    out.push_str(&escape(&e.meta));
    out.push_str("</span></a></li>");
}

/// Text or an attribute value (double-quoted) as HTML.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON that can sit inside `<script type="application/json">`: `<`, `>` and `&` become `\u`
/// escapes (inside JSON strings, the only place they can be), so no `</script>` or `<!--` can
/// appear; `JSON.parse` reads the same value.
pub fn script_safe_json(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

#[cfg(test)]
mod tests;
