//! Shown when not signed in.

use leptos::prelude::*;

/// Explains how to sign in (the one-time login link printed by `bridge-relay`).
#[component]
pub fn LoginScreen(
    /// What went wrong, if anything.
    message: Option<String>,
) -> impl IntoView {
    view! {
        <main class="login-screen" data-testid="login-screen">
            <h1>"Bridge Console"</h1>
            <p>"You are not signed in. Open the login link that "<code>"bridge-relay"</code>" printed when it started (it looks like "<code>"http://127.0.0.1:PORT/#login=…"</code>")."</p>
            {message.map(|m| view! { <p class="field-error" role="alert">{m}</p> })}
        </main>
    }
}
