//! The application shell: sign-in, routing, layout.

use leptos::prelude::*;

use crate::components::{LoginScreen, SessionList, SessionView};
use crate::dom;
use crate::nav::{Nav, percent_decode};
use crate::net::{self, NetError};
use crate::store::Store;

#[derive(Clone, Debug, PartialEq)]
enum Auth {
    Checking,
    SignedIn,
    SignedOut(Option<String>),
    Failed(String),
}

/// The console. On load it exchanges a `#login=<token>` fragment for a session cookie
/// (`POST /v1/auth/login`), removes the fragment from the address bar, asks `GET /v1/me` for the
/// role, and opens the session the URL names (`/s/<id>`).
#[component]
pub fn App() -> impl IntoView {
    let store = Store::http().provide();
    let nav = Nav::install();
    store.watch_visibility();
    dom::install_keyboard_inset();
    let auth = RwSignal::new(Auth::Checking);
    leptos::task::spawn_local(async move {
        let mut login_error = None;
        let hash = dom::location_hash();
        if let Some(token) = hash.strip_prefix("#login=") {
            let token = percent_decode(token);
            let res = net::login(&token).await;
            // The token must not stay in the address bar or the history.
            dom::replace_url(&format!(
                "{}{}",
                dom::location_path(),
                dom::location_search()
            ));
            if let Err(e) = res {
                login_error = Some(format!(
                    "The login link did not work ({e}). Links are single-use; restart bridge-relay or use a fresh one."
                ));
            }
        }
        match net::me().await {
            Ok(me) => {
                if let Some(scope) = me.session_id.clone()
                    && nav.session.get_untracked().is_none()
                {
                    nav.go(Some(&scope));
                }
                store.me.set(Some(me));
                auth.set(Auth::SignedIn);
            }
            Err(NetError::Status(401 | 403, _)) => auth.set(Auth::SignedOut(login_error)),
            Err(e) => auth.set(Auth::Failed(e.to_string())),
        }
    });
    Effect::new(move |_| {
        if auth.with(|a| *a != Auth::SignedIn) {
            return;
        }
        match nav.session.get() {
            Some(id) => store.open_session(id),
            None => store.close_session(),
        }
    });
    let has_session = Memo::new(move |_| nav.session.with(Option::is_some));
    move || {
        match auth.get() {
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
        Auth::SignedIn => view! {
            <div class="app" class:has-session=move || has_session.get()>
                <aside class="sidebar">
                    <SessionList />
                </aside>
                <main class="main">
                    {move || {
                        if has_session.get() {
                            view! { <SessionView /> }.into_any()
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
            </div>
        }
        .into_any(),
    }
    }
}
