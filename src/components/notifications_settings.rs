//! The Notifications panel.

pub mod device_row;
pub mod terminal;

use leptos::prelude::*;

use crate::components::busy_button::BusyButton;
use crate::components::modal_panel::{CloseButton, ModalPanel};
use crate::dom;
use crate::lazy::{self, Part};
use crate::pwa::{self, PUSH_EVENTS, PushSupport};
use crate::store::Device;

pub use device_row::DeviceRow;

/// What the status line says for a `data-state` of `notifications-status`.
fn status_text(state: &str, explain: Option<String>, unreachable: Option<String>) -> String {
    match state {
        "enabled" => "Push notifications are on for this device. They arrive even when the console is closed.".into(),
        "off" => "Push notifications are off on this device.".into(),
        "unreachable" => format!(
            "The browser's push service could not be reached ({}), so push cannot work here right now. Try again later, or let this tab notify you while it is open.",
            unreachable.unwrap_or_default()
        ),
        _ => explain.unwrap_or_default(),
    }
}

/// The Notifications panel (`data-testid="notifications-settings"`, a modal dialog): whether push
/// can work on this device and, plainly, why not (`notifications-status` with `data-state`);
/// "Enable on this device" (`notifications-enable`: the permission is asked only then); the events
/// (`notifications-event-<type>` checkboxes); a test (`notifications-test`, result in
/// `notifications-test-result`); the devices (`notifications-device`, each with
/// `notifications-device-remove`). Where push cannot work it offers notifications shown by this tab
/// while it is open in the background (`notifications-enable-inpage`). Observers get no push
/// controls (the relay would refuse them). Escape or `notifications-close` closes it.
///
/// Its code loads lazily (the settings part, src/lazy.rs): it shows once that is in.
#[component]
pub fn NotificationsSettings() -> impl IntoView {
    move || lazy::ready(Part::Settings).then(lazy_settings).flatten()
}

crate::lazy::lazy_entries! {
    /// The panel ([`settings_view`]), or `None` while the settings part is not loaded.
    fn lazy_settings() -> AnyView, part settings / Settings,
        entry settings, preload preload_settings { settings_view() }
}

/// The panel itself (in the lazily loaded settings part).
pub fn settings_view() -> AnyView {
    view! { <NotificationsPanel /> }.into_any()
}

#[component]
fn NotificationsPanel() -> impl IntoView {
    let device = Device::expect();
    let close = move || {
        device.close_notifications();
        dom::focus_selector("[data-testid='notifications-open']");
    };
    let controller = Memo::new(move |_| device.is_controller());
    let busy = Memo::new(move |_| device.push.with(|p| p.busy));
    let state = Memo::new(move |_| device.push.with(|p| p.status()));
    let enabled = Memo::new(move |_| device.push.with(|p| p.device.is_some()));
    let status = move || {
        device.push.with(|p| {
            status_text(
                p.status(),
                p.support().explain(&p.caps.host),
                p.unreachable.clone(),
            )
        })
    };
    let can_enable = move || {
        controller.get()
            && !enabled.get()
            && device
                .push
                .with(|p| p.checked && p.support() == PushSupport::Ready)
    };
    let offer_in_page = move || {
        device.push.with(|p| {
            p.offer_in_page()
                || (!controller.get() && p.device.is_none() && pwa::in_page_possible(&p.caps))
        })
    };
    let my_id = move || {
        device
            .push
            .with(|p| p.device.as_ref().map(|d| d.subscription_id.clone()))
    };
    view! {
        <ModalPanel
            backdrop_class="dialog-backdrop"
            class="dialog notifications-settings"
            labelled_by="notifications-title"
            test_id="notifications-settings"
            on_close=close
            on_escape=close
        >
            <header class="dialog-head">
                <h2 id="notifications-title">"Notifications"</h2>
                <CloseButton test_id="notifications-close" aria_label="Close notification settings" on_click=close />
            </header>
            <div class="dialog-body">
                <p class="notif-status" data-testid="notifications-status" data-state=move || state.get() role="status">
                    {status}
                </p>
                {move || (!controller.get()).then(|| view! {
                    <p class="muted">"Push notifications are set up by the controller; this console only watches."</p>
                })}
                {move || can_enable().then(|| view! {
                    <div class="notif-enable">
                        <BusyButton
                            class="primary"
                            test_id="notifications-enable"
                            busy=busy
                            label="Enable on this device"
                            busy_label="Enabling…"
                            on_click=move || device.enable_push()
                        />
                        <p class="muted small">"Your browser asks for permission first. Prompts can then be answered from the notification."</p>
                    </div>
                })}
                {move || (controller.get() && enabled.get()).then(|| view! {
                    <fieldset class="notif-events" disabled=move || busy.get()>
                        <legend>"Notify this device when"</legend>
                        {PUSH_EVENTS.iter().map(|(ev, label)| {
                            let ev = *ev;
                            let checked = move || device.push.with(|p| p.device.as_ref().is_some_and(|d| d.events.iter().any(|e| e == ev)));
                            view! {
                                <label class="field field-check">
                                    <input
                                        type="checkbox"
                                        data-testid=format!("notifications-event-{ev}")
                                        prop:checked=checked
                                        on:change=move |e| device.set_push_event(ev, event_target_checked(&e))
                                    />
                                    <span>{*label}</span>
                                </label>
                            }
                        }).collect_view()}
                        <p class="muted small">"A prompt answered anywhere closes its notification on every device."</p>
                    </fieldset>
                    <div class="notif-actions">
                        <BusyButton test_id="notifications-test" busy=busy label="Send a test notification" on_click=move || device.test_push() />
                        <BusyButton
                            class="danger-outline"
                            test_id="notifications-disable"
                            busy=busy
                            label="Turn off on this device"
                            on_click=move || {
                                if let Some(id) = my_id() {
                                    device.remove_device(&id);
                                }
                            }
                        />
                    </div>
                })}
                {move || device.push.with(|p| p.test_result.clone()).map(|r| {
                    let (state, text) = match r {
                        Ok(t) => ("sent", t),
                        Err(t) => ("error", t),
                    };
                    view! { <p class=format!("notif-test-result {state}") data-testid="notifications-test-result" data-state=state role="status">{text}</p> }
                })}
                {move || device.push.with(|p| p.error.clone()).map(|e| view! {
                    <p class="field-error" data-testid="notifications-error" role="alert">{e}</p>
                })}
                {move || offer_in_page().then(|| {
                    let on = move || device.push.with(|p| p.in_page_active());
                    view! {
                        <section class="notif-fallback" aria-labelledby="notif-fallback-title">
                            <h3 id="notif-fallback-title">"While this tab is open"</h3>
                            <p class="muted small">
                                "This tab can show a notification when a session starts waiting for you while you are in another tab or window. It cannot when the tab is closed."
                            </p>
                            {move || if on() {
                                view! {
                                    <p data-testid="notifications-inpage-on" role="status">"On: this tab notifies you while it is open."</p>
                                    <button data-testid="notifications-disable-inpage" on:click=move |_| device.disable_in_page()>"Turn off"</button>
                                }.into_any()
                            } else {
                                view! {
                                    <button data-testid="notifications-enable-inpage" on:click=move |_| device.enable_in_page()>
                                        "Notify me in this tab"
                                    </button>
                                }.into_any()
                            }}
                        </section>
                    }
                })}
                {move || controller.get().then(|| view! { <terminal::TerminalPromptsSwitch /> })}
                {move || controller.get().then(|| view! {
                    <section class="notif-devices" aria-labelledby="notif-devices-title">
                        <h3 id="notif-devices-title">"Devices with push on"</h3>
                        {move || match device.devices.get() {
                            None => view! { <p class="muted small">"Loading…"</p> }.into_any(),
                            Some(Err(e)) => view! { <p class="field-error" role="alert">{format!("The device list could not be read: {e}")}</p> }.into_any(),
                            Some(Ok(list)) if list.is_empty() => view! { <p class="muted small" data-testid="notifications-no-devices">"No device has push on yet."</p> }.into_any(),
                            Some(Ok(list)) => view! {
                                <ul class="devices" data-testid="notifications-devices" aria-label="Devices with push on">
                                    {list.into_iter().map(|d| {
                                        let mine = my_id().as_deref() == Some(d.id.as_str());
                                        view! { <DeviceRow device=d mine=mine /> }
                                    }).collect_view()}
                                </ul>
                            }.into_any(),
                        }}
                    </section>
                })}
            </div>
        </ModalPanel>
    }
}
