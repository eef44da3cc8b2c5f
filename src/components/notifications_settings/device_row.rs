//! One device in the Notifications panel.

use bridge_protocol::api::{PushDevice, ago, parse_iso_ms};
use leptos::prelude::*;

use crate::store::Device;

/// A short name for an event type.
fn event_name(e: &str) -> Option<&str> {
    Some(match e {
        "needs_you" => "needs you",
        "turn_done" => "turn done",
        "agent_exited" => "agent exited",
        "resolved" => return None,
        other => other,
    })
}

/// A device with push on (`data-testid="notifications-device"`, `data-device-id`,
/// `data-this-device`): its name, events and last delivery, and a remove button
/// (`notifications-device-remove`).
#[component]
pub fn DeviceRow(
    /// The device, as the relay lists it.
    device: PushDevice,
    /// Whether it is this browser.
    mine: bool,
) -> impl IntoView {
    let here = Device::expect();
    let label = device
        .label
        .clone()
        .filter(|l| !l.trim().is_empty())
        .unwrap_or_else(|| "Unnamed device".into());
    let events: Vec<&str> = device.events.iter().filter_map(|e| event_name(e)).collect();
    let mut facts = vec![if events.is_empty() {
        "no events".to_string()
    } else {
        events.join(", ")
    }];
    let now = js_sys::Date::now();
    if let Some(then) = device.last_success_at.as_deref().and_then(parse_iso_ms) {
        facts.push(format!("last delivered {}", ago(then, now)));
    }
    let error = device.last_error.clone().filter(|e| !e.is_empty());
    let id = device.id.clone();
    let remove_label = format!("Remove {label}");
    view! {
        <li class="device" data-testid="notifications-device" data-device-id=device.id.clone() data-this-device=mine.to_string()>
            <div class="device-text">
                <span class="device-name">{label}{mine.then_some(" (this device)")}</span>
                <span class="muted small">{facts.join(" · ")}</span>
                {error.map(|e| view! { <span class="device-error small">{format!("Last error: {e}")}</span> })}
            </div>
            <button
                class="danger-outline"
                data-testid="notifications-device-remove"
                aria-label=remove_label
                disabled=move || here.push.with(|p| p.busy)
                on:click=move |_| here.remove_device(&id)
            >
                "Remove"
            </button>
        </li>
    }
}
