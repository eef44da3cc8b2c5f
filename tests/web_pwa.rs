//! Browser tests of the installed-app parts of the console (wasm-bindgen-test in headless
//! Chromium): the Notifications panel says plainly why push cannot work and offers the in-page
//! fallback, shows an enabled device's events and the device list, gives observers no push
//! controls and closes on Escape; "New version — reload" waits for a click; the offline banner
//! counts down and retries on demand; `?view=needs-you` lists only sessions waiting for an answer;
//! a draft kept for an update reload comes back in the composer.

use bridge_console::components::{
    Composer, NotificationsSettings, OfflineBanner, SessionList, UpdateBanner,
};
use bridge_console::nav::ListView;
use bridge_console::net::{Me, SessionSummary};
use bridge_console::pwa::{self, Capabilities, DeviceRecord, Permission};
use bridge_console::store::{PushState, RelayOffline, Store};
use bridge_protocol::api::PushDevice;
use leptos::prelude::*;
use leptos::task::tick;
use serde_json::{Value, json};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

use crate::web::mounted::{Mounted, assert_attr, mount_in, new_root};

/// Mounts `view` under a fresh store (session "s1" open, signed in as `role`) and a router.
fn mount<V: IntoView + 'static>(role: &str, view: impl FnOnce() -> V + 'static) -> Mounted {
    let role = role.to_string();
    let setup = move |store: Store| {
        store.me.set(Some(Me {
            role,
            session_id: None,
        }))
    };
    mount_in(new_root(), setup, view)
}

fn ready_caps() -> Capabilities {
    Capabilities::push_ready("relay.lan:8787")
}

fn set_push(m: &Mounted, state: PushState) {
    m.store.device.push.set(PushState {
        checked: true,
        ..state
    });
}

/// What the browser offers, with nothing else set up.
fn caps_only(caps: Capabilities) -> PushState {
    PushState {
        caps,
        ..PushState::default()
    }
}

fn status(m: &Mounted) -> (String, String) {
    let el = m.one("[data-testid=notifications-status]");
    (
        el.get_attribute("data-state").unwrap_or_default(),
        el.text_content().unwrap_or_default(),
    )
}

#[wasm_bindgen_test]
async fn the_panel_says_why_push_cannot_work_and_offers_the_fallback() {
    let m = mount("controller", || view! { <NotificationsSettings /> });
    let panel = m.one("[data-testid=notifications-settings]");
    assert_attr(&panel, "role", "dialog");
    assert_attr(&panel, "aria-modal", "true");

    for (push, state, says, enable, in_page) in [
        // Plain HTTP from another computer: no push, and no in-page notifications either.
        (
            caps_only(Capabilities {
                secure_context: false,
                service_worker: false,
                push_manager: false,
                ..ready_caps()
            }),
            "insecure",
            &["HTTPS", "relay.lan:8787"][..],
            false,
            false,
        ),
        // iPhone in a Safari tab: install it first; meanwhile this tab can notify.
        (
            caps_only(Capabilities {
                ios: true,
                push_manager: false,
                ..ready_caps()
            }),
            "ios-home-screen",
            &["Add to Home Screen"],
            false,
            true,
        ),
        // Blocked: says where to undo it, offers nothing that would ask again.
        (
            caps_only(Capabilities {
                permission: Permission::Denied,
                ..ready_caps()
            }),
            "denied",
            &[],
            false,
            false,
        ),
        // Push can work: enable (the permission is asked only on that click), no fallback offered.
        (caps_only(ready_caps()), "off", &[], true, false),
        // The browser's push service could not be reached: say so, offer the fallback, allow a retry.
        (
            PushState {
                unreachable: Some("push service error".into()),
                ..caps_only(ready_caps())
            },
            "unreachable",
            &["push service error"],
            true,
            true,
        ),
    ] {
        set_push(&m, push);
        tick().await;
        let (shown, text) = status(&m);
        assert_eq!(shown, state);
        for part in says {
            assert!(text.contains(part), "{state}: {text}");
        }
        assert_eq!(
            m.has("[data-testid=notifications-enable]"),
            enable,
            "{state}"
        );
        if enable {
            assert_eq!(
                m.text("[data-testid=notifications-enable]"),
                "Enable on this device"
            );
        }
        assert_eq!(
            m.has("[data-testid=notifications-enable-inpage]"),
            in_page,
            "{state}"
        );
    }
}

#[wasm_bindgen_test]
async fn an_enabled_device_shows_its_events_the_devices_and_the_test_result() {
    let m = mount("controller", || view! { <NotificationsSettings /> });
    set_push(
        &m,
        PushState {
            caps: Capabilities {
                permission: Permission::Granted,
                ..ready_caps()
            },
            device: Some(DeviceRecord {
                subscription_id: "psub_mine".into(),
                endpoint: "https://push.example/abc".into(),
                label: "Chrome on Android".into(),
                events: vec!["needs_you".into(), "resolved".into()],
            }),
            test_result: Some(Ok("Sent: the push service answered 201.".into())),
            ..PushState::default()
        },
    );
    let device = |id: &str, label: &str, events: Value| -> PushDevice {
        serde_json::from_value(json!({"id": id, "label": label, "events": events,
            "last_success_at": null, "last_error": "the push service answered 500"}))
        .unwrap()
    };
    m.store.device.devices.set(Some(Ok(vec![
        device(
            "psub_mine",
            "Chrome on Android",
            json!(["needs_you", "resolved"]),
        ),
        device(
            "psub_desk",
            "Firefox on Linux",
            json!(["turn_done", "resolved"]),
        ),
    ])));
    tick().await;
    assert_eq!(status(&m).0, "enabled");
    assert!(!m.has("[data-testid=notifications-enable]"));
    let checked = |ev: &str| {
        m.one(&format!("[data-testid=notifications-event-{ev}]"))
            .dyn_into::<web_sys::HtmlInputElement>()
            .unwrap()
            .checked()
    };
    assert!(checked("needs_you"));
    assert!(!checked("turn_done"));
    assert!(!checked("agent_exited"));
    assert!(
        !m.has("[data-testid=notifications-event-resolved]"),
        "resolved is implied"
    );
    let rows = m.all("[data-testid=notifications-device]");
    assert_eq!(rows.len(), 2);
    assert_attr(&rows[0], "data-this-device", "true");
    assert_attr(&rows[1], "data-device-id", "psub_desk");
    assert!(
        rows[0]
            .text_content()
            .unwrap()
            .contains("Chrome on Android (this device)")
    );
    assert!(
        rows[1]
            .text_content()
            .unwrap()
            .contains("Last error: the push service answered 500")
    );
    let removes = m.all("[data-testid=notifications-device-remove]");
    assert_eq!(removes.len(), 2);
    assert_attr(&removes[1], "aria-label", "Remove Firefox on Linux");
    assert!(m.has("[data-testid=notifications-test]"));
    let result = m.one("[data-testid=notifications-test-result]");
    assert_attr(&result, "data-state", "sent");
    assert!(m.has("[data-testid=notifications-disable]"));
}

#[wasm_bindgen_test]
async fn observers_get_no_push_controls_and_escape_closes_the_panel() {
    let m = mount("observer", || view! { <NotificationsSettings /> });
    m.store.device.notifications_open.set(true);
    set_push(&m, caps_only(ready_caps()));
    tick().await;
    assert!(m.has("[data-testid=notifications-status]"));
    for tid in [
        "notifications-enable",
        "notifications-test",
        "notifications-event-needs_you",
        "notifications-device",
    ] {
        assert!(!m.has(&format!("[data-testid={tid}]")), "{tid}");
    }
    assert!(
        m.text("[data-testid=notifications-settings]")
            .contains("controller")
    );
    let init = web_sys::KeyboardEventInit::new();
    init.set_key("Escape");
    init.set_bubbles(true);
    init.set_cancelable(true);
    let esc = web_sys::KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap();
    web_sys::window().unwrap().dispatch_event(&esc).unwrap();
    tick().await;
    assert!(!m.store.device.notifications_open.get_untracked());
    assert!(esc.default_prevented());
}

#[wasm_bindgen_test]
async fn a_new_version_waits_for_a_click() {
    let m = mount("controller", || view! { <UpdateBanner /> });
    assert!(!m.has("[data-testid=update-available]"));
    m.store.device.update_ready.set(true);
    tick().await;
    let button = m.one("[data-testid=update-available]");
    assert_eq!(button.tag_name(), "BUTTON");
    assert_eq!(button.text_content().unwrap(), "New version — reload");
    m.one("[data-testid=update-later]").click();
    tick().await;
    assert!(!m.has("[data-testid=update-available]"));
}

#[wasm_bindgen_test]
async fn the_offline_banner_counts_down_and_retries_on_demand() {
    let m = mount("controller", || view! { <OfflineBanner /> });
    assert!(!m.has("[data-testid=offline-banner]"));
    m.store.device.set_relay_offline(Some(RelayOffline {
        reason: "could not reach the relay: Failed to fetch".into(),
        attempt: 2,
        next_at_ms: js_sys::Date::now() + 4_500.0,
    }));
    tick().await;
    let banner = m.one("[data-testid=offline-banner]");
    assert_attr(&banner, "data-state", "reconnecting");
    let text = banner.text_content().unwrap();
    assert!(
        text.contains("Offline") && text.contains("Reconnecting in 5 s"),
        "{text}"
    );
    assert!(!m.store.device.take_retry_now());
    m.one("[data-testid=offline-retry]").click();
    assert!(m.store.device.take_retry_now());
    assert!(!m.store.device.take_retry_now(), "taken once");
    m.store.device.set_relay_offline(None);
    tick().await;
    assert!(!m.has("[data-testid=offline-banner]"));
}

fn summary(id: &str, state: &str, pending: u64) -> SessionSummary {
    serde_json::from_value(json!({"id": id, "state": state, "pending_permissions": pending}))
        .unwrap()
}

#[wasm_bindgen_test]
async fn the_needs_you_view_lists_only_sessions_waiting_for_an_answer() {
    let m = mount("controller", || view! { <SessionList /> });
    let search = web_sys::window().unwrap().location().search().unwrap();
    m.store.list.sessions.set(vec![
        summary("a", "idle", 0),
        summary("b", "requires_action", 1),
        summary("c", "running", 0),
    ]);
    m.nav.view.set(ListView::NeedsYou);
    tick().await;
    let ids = |m: &Mounted| -> Vec<String> {
        m.all("[data-testid=session-item]")
            .iter()
            .filter_map(|e| e.get_attribute("data-session-id"))
            .collect()
    };
    assert_eq!(ids(&m), ["b"]);
    let needs = m.one("[data-testid=session-filter-needs-you]");
    assert_attr(&needs, "aria-pressed", "true");
    assert_eq!(needs.text_content().unwrap(), "Needs you (1)");
    // The way back to all.
    m.one("[data-testid=session-filter-all]").click();
    tick().await;
    assert_eq!(m.nav.view.get_untracked(), ListView::All);
    assert_eq!(ids(&m), ["a", "b", "c"]);
    // Nothing waiting: says so and offers all.
    m.store.list.sessions.set(vec![summary("a", "idle", 0)]);
    m.nav.view.set(ListView::NeedsYou);
    tick().await;
    assert!(m.has("[data-testid=needs-you-empty]"));
    m.one("[data-testid=session-filter-show-all]").click();
    tick().await;
    assert_eq!(ids(&m), ["a"]);
    assert!(m.has("[data-testid=notifications-open]"));
    // The bell opens the panel.
    m.one("[data-testid=notifications-open]").click();
    assert!(m.store.device.notifications_open.get_untracked());
    let here = web_sys::window().unwrap().location().pathname().unwrap();
    bridge_console::dom::replace_url(&format!("{here}{search}"));
}

#[wasm_bindgen_test]
async fn a_draft_kept_for_an_update_reload_comes_back_in_the_composer() {
    pwa::save_draft("s1", "half a thought");
    let m = mount("controller", || view! { <Composer /> });
    tick().await;
    let input: web_sys::HtmlTextAreaElement =
        m.one("[data-testid=composer-input]").dyn_into().unwrap();
    assert_eq!(input.value(), "half a thought");
    assert_eq!(pwa::take_draft("s1"), None, "taken once");
}
