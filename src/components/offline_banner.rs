//! The relay cannot be reached.

use leptos::prelude::*;

use crate::components::connection_status::countdown_clock;
use crate::store::Device;

/// Shown while the console, opened from the service worker's cache, cannot reach the relay
/// (`data-testid="offline-banner"`, `data-state="reconnecting"`): says so, counts down to the next
/// attempt, and offers "Retry now" (`data-testid="offline-retry"`). Unsent messages stay kept.
#[component]
pub fn OfflineBanner() -> impl IntoView {
    let device = Device::expect();
    let now = countdown_clock(move || device.relay_offline.with_untracked(Option::is_some));
    let countdown = move || {
        device.relay_offline.with(|o| {
            let Some(o) = o else {
                return String::new();
            };
            let secs = ((o.next_at_ms - now.get()) / 1000.0).ceil().max(0.0) as u64;
            if secs == 0 {
                "Reconnecting…".to_string()
            } else {
                format!("Reconnecting in {secs} s.")
            }
        })
    };
    let reason = move || {
        device
            .relay_offline
            .with(|o| o.as_ref().map(|o| o.reason.clone()).unwrap_or_default())
    };
    move || {
        device.relay_offline.with(Option::is_some).then(|| {
            view! {
                <div class="offline-banner" data-testid="offline-banner" data-state="reconnecting" role="status" title=reason>
                    <p>
                        <strong>"Offline: the relay cannot be reached. "</strong>
                        <span class="offline-countdown">{countdown}</span>
                    </p>
                    <p class="small">"Messages you write are kept on this device and sent when the relay is back."</p>
                    <button data-testid="offline-retry" on:click=move |_| device.retry_relay_now()>"Retry now"</button>
                </div>
            }
        })
    }
}
