//! The application shell: sign-in, routing, layout.

use std::rc::Rc;

use leptos::prelude::*;

use crate::components::{
    EarlyPrompt, LoginScreen, NotificationsSettings, OfflineBanner, SessionList, UpdateBanner,
};
use crate::dom;
use crate::embed;
use crate::lazy::{self, Part};
use crate::nav::Nav;
use crate::net::NetError;
use crate::store::{RelayOffline, Store};

#[derive(Clone, Debug, PartialEq)]
enum Auth {
    Checking,
    SignedIn,
    SignedOut(Option<String>),
    Failed(String),
    /// The relay cannot be reached (the console opened from the service worker's cache): the usual
    /// shell shows, says so, and `GET /v1/me` is tried again with backoff.
    Offline,
}

/// Whether a failed `GET /v1/me` means the relay is out of reach (try again) rather than an answer.
fn unreachable(e: &NetError) -> bool {
    matches!(e, NetError::Network(_) | NetError::Status(502..=504, _))
}

/// Waits `ms`, or less if a retry is asked for (button, back online, page visible again).
async fn wait_or_retry(store: Store, ms: u32) {
    let mut waited = 0;
    while waited < ms {
        gloo_timers::future::TimeoutFuture::new(250).await;
        waited += 250;
        if store.device.take_retry_now() {
            return;
        }
    }
}

/// Asks `GET /v1/me` who is signed in and shows the console, the sign-in screen or why not; while
/// the relay is out of reach, asks again with backoff.
async fn check_me(
    store: Store,
    nav: Nav,
    auth: RwSignal<Auth>,
    login_error: Option<String>,
    observer: bool,
) {
    let mut attempt = 0u32;
    loop {
        match store.who_am_i().await {
            Ok(mut me) => {
                if observer {
                    // `controls=observer`: a read-only console whatever the credential.
                    me.role = "observer".into();
                }
                if let Some(scope) = me.session_id.clone()
                    && nav.session.get_untracked().is_none()
                {
                    nav.go(Some(&scope));
                }
                // Opened offline, the session was shown as a controller's: an observer gets it
                // read-only.
                let reopen = me.is_observer() && !store.session.with_untracked(|s| s.is_observer());
                store.me.set(Some(me));
                if reopen && let Some(sid) = store.session_id.get_untracked() {
                    store.close_session();
                    store.open_session(sid);
                }
                store.device.set_relay_offline(None);
                auth.set(Auth::SignedIn);
            }
            Err(NetError::Status(401 | 403, _)) => {
                store.device.set_relay_offline(None);
                auth.set(Auth::SignedOut(login_error));
            }
            Err(e) if unreachable(&e) => {
                let delay = crate::pwa::retry_delay_ms(attempt, js_sys::Math::random());
                attempt += 1;
                store.device.set_relay_offline(Some(RelayOffline {
                    reason: e.to_string(),
                    attempt,
                    next_at_ms: js_sys::Date::now() + f64::from(delay),
                }));
                if auth.try_get_untracked().is_none() {
                    return;
                }
                if auth.get_untracked() != Auth::Offline {
                    auth.set(Auth::Offline);
                }
                wait_or_retry(store, delay).await;
                continue;
            }
            Err(e) => {
                store.device.set_relay_offline(None);
                auth.set(Auth::Failed(e.to_string()));
            }
        }
        break;
    }
}

/// What the sign-in screen says when a login link did not work.
fn login_link_failed(e: &NetError) -> String {
    format!(
        "The login link did not work ({e}). Links are single-use; restart bridge-relay or use a fresh one."
    )
}

/// What the main pane shows while the session view's part loads.
fn loading_session() -> AnyView {
    view! {
        <section class="session-view session-loading" aria-label="Session" aria-busy="true">
            <p class="loading" role="status" data-testid="session-loading">"Loading the session…"</p>
        </section>
    }
    .into_any()
}

/// The console. On load it exchanges a `#login=<token>` fragment for a session cookie
/// (`POST /v1/auth/login`), removes the fragment from the address bar, asks `GET /v1/me` for the
/// role, and opens the session the URL names (`/s/<id>`). When the relay cannot be reached it shows
/// the usual shell, says it is offline, and asks again with backoff. It registers the service
/// worker, offers a new build once it is installed, and holds the Notifications panel.
#[component]
pub fn App() -> impl IntoView {
    crate::components::register_lazy_parts();
    let store = Store::http().provide();
    let nav = Nav::install();
    store.watch_visibility();
    dom::install_keyboard_inset();
    let open: Rc<dyn Fn(String)> = Rc::new(move |path: String| nav.open_path(&path));
    store.device.init_device(open.clone());
    store.watch_prompts(open);
    let address = embed::parse_address(&dom::location_search(), &dom::location_hash());
    let observer = address.switches.observer;
    let embedded = address.switches.embed;
    // A page the relay pre-rendered for this browser's login (a controller's) holds the answers
    // of `GET /v1/me` and the list: the console starts from them — not for a login link (someone
    // else may be signing in), the observer switch or embed mode — and reads both again now. When
    // index.html's boot script signed in with the link's code, the link is gone from the URL and
    // the data it put in the page is that new login's.
    let boot =
        crate::boot::take_data().filter(|_| address.login.is_none() && !observer && !embedded);
    let from_boot = boot.is_some();
    if let Some(b) = boot {
        if let Some(waiting) = b.prompts {
            store.early.seed(waiting);
        }
        store.seed(b.me, b.sessions);
    }
    let auth = RwSignal::new(if from_boot {
        Auth::SignedIn
    } else {
        Auth::Checking
    });
    if let Some(id) = nav.session.get_untracked() {
        // A deep link to a session: its view's part and its live connection load while `/v1/me`
        // is asked — after the dialogs part when the page came with a prompt that session waits
        // on (a notification opened it): the dialog takes the tap before the rest has loaded.
        if store.early.any_for(&id) {
            lazy::first(Part::Dialogs);
        }
        lazy::prefetch(Part::Session);
        lazy::prefetch(Part::Live);
    }
    if let Some(sid) = &address.switches.session
        && nav.session.get_untracked().is_none()
    {
        nav.session.set(Some(sid.clone()));
        lazy::prefetch(Part::Session);
        lazy::prefetch(Part::Live);
    }
    // A host hands a token (`auth` message): exchanged for the cookie; if the cookie does not come
    // back (a cross-site iframe), the token stays in memory as a bearer token.
    let on_auth: Rc<dyn Fn(String)> = Rc::new(move |token: String| {
        leptos::task::spawn_local(async move {
            let login_error = store
                .sign_in_from_host(token)
                .await
                .err()
                .map(|e| format!("The host's token did not work ({e})."));
            check_me(store, nav, auth, login_error, observer).await;
        });
    });
    embed::host::install(&address.switches, store, nav, on_auth);
    let online = window_event_listener_untyped("online", move |_| store.device.retry_relay_now());
    on_cleanup(move || online.remove());
    let visible = window_event_listener_untyped("visibilitychange", move |_| {
        if !dom::page_hidden() {
            store.device.retry_relay_now();
        }
    });
    on_cleanup(move || visible.remove());
    leptos::task::spawn_local(async move {
        let mut login_error = None;
        // index.html's boot script took the link's code (single-use) before the wasm ran: its
        // answer is this sign-in; the URL no longer holds the code.
        if let Some(res) = store.sign_in_from_page().await {
            if let Err(e) = res {
                login_error = Some(login_link_failed(&e));
            }
        } else if let Some(token) = &address.login {
            let res = store.sign_in(token).await;
            // The token must not stay in the address bar or the history (the switches do).
            dom::replace_url(&format!(
                "{}{}{}",
                dom::location_path(),
                dom::location_search(),
                address.fragment
            ));
            if let Err(e) = res {
                login_error = Some(login_link_failed(&e));
            }
        }
        // The list is read beside `GET /v1/me`, not after it (the list shows it when signed in).
        if !embedded {
            store.list.refresh_unless_pending();
        }
        check_me(store, nav, auth, login_error, observer).await;
    });
    Effect::new(move |_| {
        if auth.with(|a| !matches!(a, Auth::SignedIn | Auth::Offline)) {
            return;
        }
        match nav.session.get() {
            Some(id) => store.open_session(id),
            None => store.close_session(),
        }
    });
    // The static shell of index.html gives way once the first real screen is rendered beneath it:
    // the session list with its sessions (or after boot::LIST_WAIT_MS), the sign-in screen, an error.
    Effect::new(move |prev: Option<()>| {
        store.list.sessions.track();
        if prev.is_some() {
            crate::boot::done();
        }
    });
    // Started from the boot data: the list is rendered with its sessions now; the shell goes
    // before the next paint.
    if from_boot {
        request_animation_frame(crate::boot::done);
    }
    Effect::new(move |_| match auth.get() {
        Auth::Checking => {}
        Auth::SignedIn if !embedded => crate::boot::done_later(),
        _ => crate::boot::done(),
    });
    let has_session = Memo::new(move |_| nav.session.with(Option::is_some));
    // Offline and signed in show the same shell: going from one to the other re-renders nothing
    // (a draft in the composer stays).
    let screen = Memo::new(move |_| match auth.get() {
        Auth::Offline => Auth::SignedIn,
        other => other,
    });
    let page = move || {
        match screen.get() {
        Auth::Checking => view! { <main class="loading" role="status">"Connecting to the relay…"</main> }.into_any(),
        Auth::SignedOut(msg) => view! { <LoginScreen message=msg /> }.into_any(),
        Auth::Failed(e) => view! {
            <main class="login-screen" role="alert">
                <h1>"Bridge Console"</h1>
                <p>{format!("Could not reach the relay: {e}")}</p>
                <button class="primary" on:click=|_| { let _ = web_sys::window().map(|w| w.location().reload()); }>"Try again"</button>
            </main>
        }
        .into_any(),
        Auth::SignedIn | Auth::Offline => view! {
            <div class="app" class:has-session=move || has_session.get() class:embedded=embedded>
                {(!embedded).then(|| view! {
                    <aside class="sidebar">
                        <OfflineBanner />
                        <SessionList />
                    </aside>
                })}
                <main class="main">
                    {move || {
                        if has_session.get() {
                            // The session view is a lazily loaded part: opening a session (a deep
                            // link too) loads it at once if the idle prefetch has not.
                            lazy::ready(Part::Session)
                                .then(crate::components::session_view::lazy_session_view)
                                .flatten()
                                .unwrap_or_else(loading_session)
                        } else {
                            view! {
                                <div class="welcome">
                                    <h1>"Bridge Console"</h1>
                                    <p>"Pick a session on the left, or start a new one."</p>
                                </div>
                            }
                            .into_any()
                        }
                    }}
                </main>
                <EarlyPrompt />
            </div>
        }
        .into_any(),
    }
    };
    view! {
        {page}
        <UpdateBanner />
        {move || store.device.notifications_open.get().then(|| view! { <NotificationsSettings /> })}
    }
}
