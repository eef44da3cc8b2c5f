//! "New version — reload".

use leptos::prelude::*;

use crate::components::busy_button::BusyButton;
use crate::store::Device;

/// Offers a new build of the console once it has installed in the background
/// (`data-testid="update-available"`, a button). Nothing reloads until it is clicked; then the new
/// service worker takes over and the page reloads, keeping the composer's draft; if it has not taken
/// over within a few seconds, the banner says so (`update-text`) and the page reloads anyway.
/// "Later" hides the offer until the next page load.
#[component]
pub fn UpdateBanner() -> impl IntoView {
    let device = Device::expect();
    let dismissed = RwSignal::new(false);
    let reloading = RwSignal::new(false);
    let stuck = RwSignal::new(false);
    move || {
        (device.update_ready.get() && !dismissed.get()).then(|| {
            view! {
                <div class="update-banner" role="region" aria-label="Update">
                    <span class="update-text" role="status" data-testid="update-text">
                        {move || if stuck.get() {
                            "The new version did not take over in time — reloading anyway…"
                        } else {
                            "A new version of Bridge Console is ready."
                        }}
                    </span>
                    <BusyButton
                        class="primary"
                        test_id="update-available"
                        busy=reloading
                        label="New version — reload"
                        busy_label="Reloading…"
                        on_click=move || {
                            reloading.set(true);
                            device.apply_update(move || {
                                stuck.try_set(true);
                            });
                        }
                    />
                    <button
                        class="link-button"
                        data-testid="update-later"
                        aria-label="Not now: keep this version until the next reload"
                        on:click=move |_| dismissed.set(true)
                    >
                        "Later"
                    </button>
                </div>
            }
        })
    }
}
