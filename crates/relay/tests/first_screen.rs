//! The first screen pre-rendered into index.html (issue 12) over real HTTP: a signed-in browser
//! (login cookie and its login secret, as the service worker sends them on a navigation) gets its
//! session list in the page, escaped, with the boot data, never cached and never from the
//! precompressed copies; without the secret, with an observer's login, with a bearer token or the
//! embed / observer switches: the static page.

use crate::common::*;
use serde_json::{Value, json};

const TEMPLATE: &str = "<!doctype html><html><head><title>console</title></head><body>\
    <div id=\"boot-shell\" class=\"app\"><aside class=\"sidebar\"><nav class=\"session-list\">\
    <div class=\"list-head\"><h2>Sessions</h2></div>\
    <p class=\"boot-status\" role=\"status\" id=\"boot-list\">Loading sessions…</p></nav></aside></div>\
    <script>/* tap */</script></body></html>";
const HOSTILE: &str = "<img src=x onerror=alert(1)></script>";

fn padded_template() -> String {
    // Over the compression threshold, so the static page has precompressed copies too.
    TEMPLATE.replace(
        "<title>",
        &format!("<!-- {} --><title>", "pad ".repeat(400)),
    )
}

/// A demo relay serving [`padded_template`] as its console's `index.html` (from `dir`).
fn relay_with_page(dir: &std::path::Path) -> RelayProc {
    let stat = console_dir(dir, "dist", &padded_template());
    RelayProc::start(Opts::demo(dir).static_dir(&stat))
}

async fn page(relay: &RelayProc, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut req = http().get(relay.url(path));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.unwrap()
}

fn boot_data(html: &str) -> Option<Value> {
    let open = "<script type=\"application/json\" id=\"boot-data\">";
    let start = html.find(open)? + open.len();
    let end = start + html[start..].find("</script>")?;
    Some(serde_json::from_str(&html[start..end]).unwrap())
}

#[tokio::test]
async fn a_signed_in_browser_gets_its_list_in_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let relay = relay_with_page(dir.path());
    let sid = relay.create_session_with(json!({ "title": HOSTILE })).await;
    let (cookie, secret, _) = login(&relay, TOKEN).await;
    let signed_in = [
        ("cookie", cookie.as_str()),
        ("x-bridge-login", secret.as_str()),
    ];

    for path in ["/", "/index.html", &format!("/s/{sid}"), "/?view=needs-you"] {
        let r = page(&relay, path, &signed_in).await;
        assert_eq!(r.status(), 200, "{path}");
        assert_eq!(r.headers()["cache-control"], "no-store", "{path}");
        let vary = r.headers()["vary"].to_str().unwrap().to_ascii_lowercase();
        assert!(
            vary.contains("cookie") && vary.contains("x-bridge-login"),
            "{vary}"
        );
        assert!(r.headers().get("etag").is_none(), "{path}");
        assert!(
            r.headers()["content-security-policy"]
                .to_str()
                .unwrap()
                .contains("sha256-")
        );
        let html = r.text().await.unwrap();
        let data = boot_data(&html).unwrap_or_else(|| panic!("{path}: no boot data in {html}"));
        // The boot data is what the two API calls answer.
        let me = get_json(&relay.url("/v1/me"), TOKEN).await;
        assert_eq!(data["me"], me);
        let list = get_json(&relay.url("/v1/code/sessions?kept_worktrees=1"), TOKEN).await;
        assert_eq!(
            data["sessions"]["sessions"][0]["id"],
            list["sessions"][0]["id"]
        );
        assert_eq!(data["sessions"]["sessions"][0]["title"], HOSTILE);
        if path.contains("needs-you") {
            // The demo session waits for nothing yet: the filtered list is empty.
            assert!(html.contains("No session waits for you."), "{html}");
            continue;
        }
        assert!(
            html.contains(&format!("data-session-id=\"{sid}\"")),
            "{html}"
        );
        assert!(html.contains(&format!("<a href=\"/s/{sid}\" data-boot-item>")));
        assert!(
            !html.contains("<img"),
            "the hostile title became markup: {html}"
        );
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;"));
        assert!(!html.contains("Loading sessions"));
    }

    // Compressed per request when accepted (not the precompressed static copy).
    let r = page(
        &relay,
        "/",
        &[signed_in[0], signed_in[1], ("accept-encoding", "gzip")],
    )
    .await;
    assert_eq!(r.headers()["content-encoding"], "gzip");
    assert_eq!(r.headers()["cache-control"], "no-store");

    // Not signed in this way: today's static page, revalidated as before.
    let observer = relay.mint_observer(json!({})).await;
    let (obs_cookie, obs_secret, _) = login(&relay, observer["token"].as_str().unwrap()).await;
    let bearer = format!("Bearer {TOKEN}");
    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("no credentials", vec![]),
        ("the cookie alone", vec![signed_in[0]]),
        (
            "a wrong login secret",
            vec![signed_in[0], ("x-bridge-login", "nope")],
        ),
        (
            "an observer's login",
            vec![
                ("cookie", obs_cookie.as_str()),
                ("x-bridge-login", obs_secret.as_str()),
            ],
        ),
        ("a bearer token", vec![("authorization", bearer.as_str())]),
        (
            "a bearer token beside the cookie",
            vec![
                signed_in[0],
                signed_in[1],
                ("authorization", bearer.as_str()),
            ],
        ),
    ];
    for (what, headers) in &cases {
        let r = page(&relay, "/", headers).await;
        assert_eq!(r.status(), 200, "{what}");
        assert_eq!(r.headers()["cache-control"], "no-cache", "{what}");
        let html = r.text().await.unwrap();
        assert_eq!(html, padded_template(), "{what}");
    }
    for switch in ["/?embed=1", "/?controls=observer"] {
        let html = page(&relay, switch, &signed_in).await.text().await.unwrap();
        assert!(boot_data(&html).is_none(), "{switch}");
    }
    // A token in the URL is never used (the fragment never reaches the relay; a query is ignored).
    let html = page(&relay, &format!("/?login={TOKEN}"), &[])
        .await
        .text()
        .await
        .unwrap();
    assert!(boot_data(&html).is_none());
    // The static files are untouched.
    let r = page(&relay, "/sw.js", &signed_in).await;
    assert_ne!(r.headers().get("cache-control").unwrap(), "no-store");
}

/// `POST /v1/auth/login` with `token`, with `X-Bridge-First-Screen: first_screen` when given: the
/// answer's status, headers and JSON.
async fn login_asking(
    relay: &RelayProc,
    token: &str,
    first_screen: Option<&str>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut req = http()
        .post(relay.url("/v1/auth/login"))
        .json(&json!({ "token": token }));
    if let Some(v) = first_screen {
        req = req.header("x-bridge-first-screen", v);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, headers, r.json().await.unwrap())
}

fn cookie_of(headers: &reqwest::header::HeaderMap) -> String {
    let set = headers["set-cookie"].to_str().unwrap();
    set.split(';').next().unwrap().to_owned()
}

#[tokio::test]
async fn the_login_answer_carries_the_first_screen_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let relay = relay_with_page(dir.path());
    let sid = relay.create_session_with(json!({ "title": HOSTILE })).await;

    for (ask, path) in [("1", "/"), ("needs-you", "/?view=needs-you")] {
        let (status, headers, answer) = login_asking(&relay, TOKEN, Some(ask)).await;
        assert_eq!(status, 200);
        assert_eq!(headers["cache-control"], "no-store");
        let screen = answer["first_screen"]
            .as_str()
            .unwrap_or_else(|| panic!("{ask}: no first screen in {answer}"));
        // Exactly what the page pre-rendered for this new login puts in its shell.
        let secret = answer["login_secret"].as_str().unwrap();
        let cookie = cookie_of(&headers);
        let html = page(
            &relay,
            path,
            &[("cookie", cookie.as_str()), ("x-bridge-login", secret)],
        )
        .await
        .text()
        .await
        .unwrap();
        assert!(
            boot_data(&html).is_some(),
            "{ask}: the page is not pre-rendered"
        );
        assert!(
            html.contains(screen),
            "{ask}: {screen}\nnot in the page\n{html}"
        );
        assert!(screen.contains("id=\"boot-list\"") && screen.contains("id=\"boot-data\""));
        assert!(
            !screen.contains("<img"),
            "the hostile title became markup: {screen}"
        );
        let data = boot_data(screen).unwrap();
        assert_eq!(data["sessions"]["sessions"][0]["title"], HOSTILE);
        assert_eq!(data["me"], get_json(&relay.url("/v1/me"), TOKEN).await);
        if ask == "1" {
            assert!(screen.contains(&format!("data-session-id=\"{sid}\"")));
            assert!(screen.contains("&lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;"));
            // Small: no page template in it.
            assert!(!screen.contains("pad pad"), "{screen}");
        } else {
            assert!(screen.contains("No session waits for you."), "{screen}");
        }
    }

    // Not asked, or asked with another value: the answer as before.
    for ask in [None, Some("0"), Some("yes")] {
        let (status, _, answer) = login_asking(&relay, TOKEN, ask).await;
        assert_eq!(status, 200);
        assert!(answer.get("first_screen").is_none(), "{ask:?}: {answer}");
        assert!(answer["login_secret"].is_string());
    }

    // Observers (of everything or of one session) get none, like the page.
    for body in [json!({}), json!({ "session_id": sid })] {
        let observer = relay.mint_observer(body.clone()).await;
        let (status, _, answer) =
            login_asking(&relay, observer["token"].as_str().unwrap(), Some("1")).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(answer["role"], "observer");
        assert!(answer.get("first_screen").is_none(), "{body}: {answer}");
    }

    // A failed login answers no first screen either.
    let (status, _, answer) = login_asking(&relay, "not-a-token", Some("1")).await;
    assert_eq!(status, 401);
    assert!(answer.get("first_screen").is_none());
}

/// The page a notification opens (`/s/<id>`) carries the prompts that session waits on, as the CLI
/// sent them, so the console shows the dialog before the session has loaded: for the controller
/// whose page it is, for that session only, and not once it is answered. An observer's login, a
/// session that does not exist and any other page get none.
#[tokio::test]
async fn the_page_of_a_session_carries_its_waiting_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let relay = relay_with_page(dir.path());
    let sid = relay.create_session().await;
    let quiet = relay.create_session().await;
    let (_sse, ask) = relay.ask_bash(&sid).await;
    let (cookie, secret, _) = login(&relay, TOKEN).await;
    let signed_in = [
        ("cookie", cookie.as_str()),
        ("x-bridge-login", secret.as_str()),
    ];
    let data_at = async |path: &str| {
        let html = page(&relay, path, &signed_in).await.text().await.unwrap();
        boot_data(&html).unwrap_or_else(|| panic!("{path}: no boot data in {html}"))
    };

    let data = data_at(&format!("/s/{sid}")).await;
    assert_eq!(data["prompts"]["session_id"], sid.as_str());
    let requests = data["prompts"]["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 1, "{data}");
    assert_eq!(requests[0]["type"], "control_request");
    assert_eq!(requests[0]["request_id"], ask.payload()["request_id"]);
    assert_eq!(requests[0]["request"], ask.payload()["request"]);

    // Another session's page, the list, a session that is not there: no prompts.
    for path in [
        format!("/s/{quiet}"),
        "/".to_owned(),
        "/s/cse_not_here".to_owned(),
        format!("/s/{sid}/x"),
    ] {
        let data = data_at(&path).await;
        assert!(data.get("prompts").is_none(), "{path}: {data}");
    }
    // An observer's login gets no pre-rendered page, so no prompts either.
    let observer = relay.mint_observer(json!({ "session_id": sid })).await;
    let (obs_cookie, obs_secret, _) = login(&relay, observer["token"].as_str().unwrap()).await;
    let html = page(
        &relay,
        &format!("/s/{sid}"),
        &[
            ("cookie", obs_cookie.as_str()),
            ("x-bridge-login", obs_secret.as_str()),
        ],
    )
    .await
    .text()
    .await
    .unwrap();
    assert!(boot_data(&html).is_none(), "{html}");

    // Answered: the page no longer carries it.
    let answer = allow_as_asked(&ask);
    assert_eq!(relay.post(&sid, TOKEN, answer).await.status(), 200);
    let data = data_at(&format!("/s/{sid}")).await;
    assert!(data.get("prompts").is_none(), "{data}");
}
