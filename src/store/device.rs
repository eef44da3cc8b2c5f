//! The store's side of the installed app, for this device: a new build waiting ("New version —
//! reload", keeping the composer's draft), the relay being unreachable at start, Web Push on this
//! device (enable, events, test, the device list) and the in-page notifications that stand in for
//! push where it cannot work. [`Device`] owns that state (components that need only this take it
//! from context); the browser calls are in [`crate::pwa`], the relay calls in [`crate::net`];
//! components only call the methods here.

use std::rc::Rc;

use bridge_protocol::api::{PushDevice, PushTestAnswer};
use leptos::prelude::*;

use super::Store;
use crate::net::{self, Me, NetError};
use crate::pwa::{self, Capabilities, DeviceRecord, Permission, PushSupport};

/// How long "New version — reload" waits for the new service worker to take over before it
/// reloads the page anyway.
pub const UPDATE_TAKEOVER_MS: u32 = 4000;
/// How long the banner says "reloading anyway" before it does.
pub const UPDATE_STUCK_NOTICE_MS: u32 = 1200;

/// The relay could not be reached when the console started (it opened from the service worker's
/// cache); `GET /v1/me` is tried again with backoff.
#[derive(Clone, Debug, PartialEq)]
pub struct RelayOffline {
    /// What failed.
    pub reason: String,
    /// Attempts so far.
    pub attempt: u32,
    /// When the next attempt starts (ms since the epoch).
    pub next_at_ms: f64,
}

/// Web Push on this device, as the Notifications panel shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PushState {
    /// What the browser offers.
    pub caps: Capabilities,
    /// This device's subscription at the relay, when push is on here.
    pub device: Option<DeviceRecord>,
    /// Whether this device's state was read (the cache and the browser's subscription).
    pub checked: bool,
    /// A request is under way (the buttons wait).
    pub busy: bool,
    /// The last failure, said plainly.
    pub error: Option<String>,
    /// `pushManager.subscribe()` could not reach the browser's push service.
    pub unreachable: Option<String>,
    /// What the last test push did (`Ok`: sent; `Err`: why not).
    pub test_result: Option<Result<String, String>>,
    /// The person turned on notifications shown by the page itself.
    pub in_page: bool,
}

impl PushState {
    /// Whether push can work here.
    pub fn support(&self) -> PushSupport {
        pwa::push_support(&self.caps)
    }

    /// Whether the page should show notifications itself: turned on, allowed, and push is not on
    /// here (the service worker shows those).
    pub fn in_page_active(&self) -> bool {
        self.in_page && self.caps.permission == Permission::Granted && self.device.is_none()
    }

    /// `data-state` of `notifications-status`: `enabled`, `off`, `unreachable`, or why push cannot
    /// work ([`PushSupport::as_str`]).
    pub fn status(&self) -> &'static str {
        match self.support() {
            PushSupport::Ready if self.device.is_some() => "enabled",
            PushSupport::Ready if self.unreachable.is_some() => "unreachable",
            PushSupport::Ready => "off",
            other => other.as_str(),
        }
    }

    /// Whether the fallback (in-page notifications) should be offered.
    pub fn offer_in_page(&self) -> bool {
        self.device.is_none()
            && pwa::in_page_possible(&self.caps)
            && (self.support() != PushSupport::Ready || self.unreachable.is_some())
    }
}

/// This device's handle (cheap to copy; in context beside the [`Store`]): the installed app (a new
/// build waiting, the draft kept across its reload), the relay being unreachable at start, Web Push
/// and in-page notifications. It owns that state; it reads who is signed in and which session is
/// open from the store's signals.
#[derive(Clone, Copy)]
pub struct Device {
    /// A new build of the console installed and waits ("New version — reload").
    pub update_ready: RwSignal<bool>,
    /// The relay could not be reached at start (the console opened from cache); None once it answers.
    pub relay_offline: RwSignal<Option<RelayOffline>>,
    retry_now: StoredValue<bool>,
    /// Web Push on this device.
    pub push: RwSignal<PushState>,
    /// The relay's list of push devices (None until read; Err: why it could not be read).
    pub devices: RwSignal<Option<Result<Vec<PushDevice>, String>>>,
    /// The Notifications panel is open.
    pub notifications_open: RwSignal<bool>,
    /// The composer's text (kept across an update reload).
    draft: StoredValue<String>,
    /// Who is signed in (the store's).
    me: RwSignal<Option<Me>>,
    /// The open session (the store's).
    session_id: RwSignal<Option<String>>,
}

impl Device {
    /// A device handle reading `me` and `session_id`.
    pub fn new(me: RwSignal<Option<Me>>, session_id: RwSignal<Option<String>>) -> Self {
        Self {
            update_ready: RwSignal::new(false),
            relay_offline: RwSignal::new(None),
            retry_now: StoredValue::new(false),
            push: RwSignal::new(PushState::default()),
            devices: RwSignal::new(None),
            notifications_open: RwSignal::new(false),
            draft: StoredValue::new(String::new()),
            me,
            session_id,
        }
    }

    /// The device handle from context.
    pub fn expect() -> Self {
        expect_context::<Device>()
    }

    /// After the session list was read: sessions that newly wait for an answer get an in-page
    /// notification while the page is hidden.
    pub(super) fn notify_newly_waiting(
        &self,
        old: &[net::SessionSummary],
        new: &[net::SessionSummary],
    ) {
        if old.is_empty()
            || !crate::dom::page_hidden()
            || !self.push.with_untracked(PushState::in_page_active)
        {
            return;
        }
        for s in pwa::newly_waiting(old, new) {
            let name = crate::format::session_name(s.title.as_deref(), s.cwd.as_deref(), &s.id);
            notify_in_page(
                format!("{name} waits for your answer."),
                &s.id,
                self.open_path_callback(),
            );
        }
    }

    fn open_path_callback(&self) -> Rc<dyn Fn(String)> {
        Rc::new(|path: String| {
            if let Some(nav) = use_context::<crate::nav::Nav>() {
                nav.open_path(&path);
            } else {
                crate::dom::push_url(&path);
            }
        })
    }

    /// Whether the signed-in person is a controller (observers cannot use push: the relay refuses).
    pub fn is_controller(&self) -> bool {
        self.me
            .with(|m| m.as_ref().is_some_and(|m| !m.is_observer()))
    }

    // ------------------------------------------------------------------ the installed app

    /// Registers the service worker (a new build waiting shows "New version — reload"), reads what
    /// the browser offers and whether push is on here. `open` opens a path (`/s/<id>`) the service
    /// worker asks for after a click on a notification.
    pub fn init_device(&self, open: Rc<dyn Fn(String)>) {
        let store = *self;
        pwa::register_service_worker(pwa::SwHooks {
            on_update: Rc::new(move || {
                store.update_ready.try_set(true);
            }),
            on_navigate: open,
            showing: Rc::new(move || store.session_id.try_get_untracked().flatten()),
        });
        let caps = pwa::capabilities();
        let in_page = pwa::in_page_enabled();
        self.push.update(|p| {
            p.caps = caps;
            p.in_page = in_page;
        });
        self.check_device();
    }

    /// Reads this device's subscription: the record the service worker uses, kept only while the
    /// browser still has the subscription it was made for.
    fn check_device(&self) {
        let store = *self;
        if !self.push.with_untracked(|p| p.caps.service_worker) {
            self.push.update(|p| p.checked = true);
            return;
        }
        leptos::task::spawn_local(async move {
            let mut record = pwa::load_device().await;
            if let Some(r) = &record {
                let endpoint = pwa::current_subscription()
                    .await
                    .and_then(|s| s.get("endpoint").and_then(|e| e.as_str()).map(String::from));
                if endpoint.as_deref() != Some(r.endpoint.as_str()) {
                    pwa::forget_device().await;
                    record = None;
                }
            }
            store.push.try_update(|p| {
                p.device = record;
                p.checked = true;
            });
        });
    }

    /// Switches to the new build: keeps the composer's draft for the reload, then reloads once the
    /// new service worker has taken over. Only ever called from the person's click.
    ///
    /// If the new build has not taken over (and reloaded the page) within
    /// [`UPDATE_TAKEOVER_MS`], `on_stuck` is called — the banner says it reloads anyway — and the
    /// page reloads [`UPDATE_STUCK_NOTICE_MS`] later.
    pub fn apply_update(&self, on_stuck: impl FnOnce() + 'static) {
        if let Some(sid) = self.session_id.get_untracked() {
            let draft = self.draft.get_value();
            if !draft.trim().is_empty() {
                pwa::save_draft(&sid, &draft);
            }
        }
        pwa::activate_update();
        leptos::task::spawn_local(async move {
            gloo_timers::future::TimeoutFuture::new(UPDATE_TAKEOVER_MS).await;
            on_stuck();
            gloo_timers::future::TimeoutFuture::new(UPDATE_STUCK_NOTICE_MS).await;
            if let Some(w) = web_sys::window() {
                let _ = w.location().reload();
            }
        });
    }

    /// The composer reports its text (kept across an update reload).
    pub fn note_draft(&self, text: &str) {
        self.draft.try_update_value(|d| {
            if d != text {
                *d = text.to_string();
            }
        });
    }

    /// The draft an update reload kept for `session_id` (taken once).
    pub fn take_saved_draft(&self, session_id: &str) -> Option<String> {
        #[cfg(target_arch = "wasm32")]
        return pwa::take_draft(session_id);
        #[cfg(not(target_arch = "wasm32"))]
        {
            let _ = session_id;
            None
        }
    }

    /// Marks the relay unreachable (attempt `attempt`, next try at `next_at_ms`), or reachable.
    pub fn set_relay_offline(&self, offline: Option<RelayOffline>) {
        self.relay_offline.try_set(offline);
    }

    /// Asks the relay check waiting for its next attempt to try now (the "Retry now" button, the
    /// browser going online, the page becoming visible).
    pub fn retry_relay_now(&self) {
        self.retry_now.try_set_value(true);
    }

    /// Whether a "try now" was asked for since the last call (clears it).
    pub fn take_retry_now(&self) -> bool {
        self.retry_now
            .try_update_value(std::mem::take)
            .unwrap_or(false)
    }

    // ------------------------------------------------------------------ the panel

    /// Opens the Notifications panel and reads the current state.
    pub fn open_notifications(&self) {
        self.notifications_open.set(true);
        let caps = pwa::capabilities();
        self.push.update(|p| {
            p.caps = caps;
            p.test_result = None;
        });
        // The device list is read by the settings part (the panel's own code): `when_loaded` starts
        // loading it and reads the list once it is in.
        let device = *self;
        crate::lazy::when_loaded(crate::lazy::Part::Settings, move || {
            super::split_entry::refresh_devices(device);
        });
    }

    /// Closes the Notifications panel.
    pub fn close_notifications(&self) {
        self.notifications_open.set(false);
    }

    /// Reads the relay's device list (controllers only).
    pub fn refresh_devices(&self) {
        if !self.is_controller() {
            return;
        }
        let store = *self;
        leptos::task::spawn_local(async move {
            let list = net::list_push_devices().await.map_err(|e| e.to_string());
            // The relay dropped this device (its push service said it is gone, or it was removed
            // elsewhere): push is off here.
            if let (Ok(list), Some(mine)) = (&list, store.push.with_untracked(|p| p.device.clone()))
                && !list.iter().any(|d| d.id == mine.subscription_id)
            {
                pwa::forget_device().await;
                store.push.try_update(|p| p.device = None);
            }
            store.devices.try_set(Some(list));
        });
    }

    fn push_busy(&self, busy: bool) {
        self.push.try_update(|p| {
            p.busy = busy;
            if busy {
                p.error = None;
            }
        });
    }

    /// Ends a request that failed; an empty `error` says nothing more than the status line.
    fn push_failed(&self, error: String) {
        self.push.try_update(|p| {
            p.busy = false;
            p.error = (!error.is_empty()).then_some(error);
        });
    }

    /// "Enable on this device": asks for the permission (now, inside the click), subscribes with
    /// the relay's VAPID key, registers the subscription with a device name and the events, and
    /// keeps its id where the service worker finds it.
    pub fn enable_push(&self) {
        if !self.is_controller() || self.push.with_untracked(|p| p.busy) {
            return;
        }
        let asked = pwa::request_permission();
        self.push_busy(true);
        let store = *self;
        leptos::task::spawn_local(async move {
            let permission = asked.await;
            store.push.try_update(|p| p.caps.permission = permission);
            if permission != Permission::Granted {
                return store.push_failed(if permission == Permission::Denied {
                    "Notifications were blocked. Allow them in the browser's site settings to use push here.".into()
                } else {
                    "Notifications were not allowed (the question was dismissed). Try again to be asked once more.".into()
                });
            }
            let events = pwa::events_with_resolved(
                &pwa::PUSH_EVENTS
                    .iter()
                    .map(|(e, _)| e.to_string())
                    .collect::<Vec<_>>(),
            );
            if let Err(e) = store.subscribe_and_register(events).await {
                store.push_failed(e);
                return;
            }
            store.push.try_update(|p| {
                p.busy = false;
                p.unreachable = None;
            });
            store.refresh_devices();
        });
    }

    async fn subscribe_and_register(&self, events: Vec<String>) -> Result<(), String> {
        let key = net::vapid_public_key()
            .await
            .map_err(|e| format!("The relay's push key could not be read: {e}"))?;
        let subscription = match pwa::subscribe(&key).await {
            Ok(s) => s,
            Err(pwa::PushError::Unreachable(m)) => {
                // The status line says it (and the fallback is offered).
                self.push.try_update(|p| p.unreachable = Some(m));
                return Err(String::new());
            }
            Err(e) => return Err(format!("Push could not be turned on: {e}")),
        };
        self.register(subscription, events).await
    }

    async fn register(
        &self,
        subscription: serde_json::Value,
        events: Vec<String>,
    ) -> Result<(), String> {
        let label = self
            .push
            .with_untracked(|p| p.device.as_ref().map(|d| d.label.clone()))
            .filter(|l| !l.is_empty())
            .unwrap_or_else(pwa::this_device_label);
        let id = net::register_push(&subscription, &label, &events)
            .await
            .map_err(|e| format!("The relay did not take this device: {e}"))?;
        let record = DeviceRecord {
            subscription_id: id,
            endpoint: subscription
                .get("endpoint")
                .and_then(|e| e.as_str())
                .unwrap_or_default()
                .to_string(),
            label,
            events,
        };
        pwa::save_device(&record).await;
        self.push.try_update(|p| p.device = Some(record));
        Ok(())
    }

    /// Turns one event on or off for this device (registers the same subscription again).
    pub fn set_push_event(&self, event: &str, on: bool) {
        let Some(device) = self.push.with_untracked(|p| p.device.clone()) else {
            return;
        };
        let mut chosen: Vec<String> = device
            .events
            .iter()
            .filter(|e| e.as_str() != event)
            .cloned()
            .collect();
        if on {
            chosen.push(event.to_string());
        }
        let events = pwa::events_with_resolved(&chosen);
        self.push_busy(true);
        let store = *self;
        leptos::task::spawn_local(async move {
            let Some(subscription) = pwa::current_subscription().await else {
                pwa::forget_device().await;
                store.push.try_update(|p| p.device = None);
                return store.push_failed(
                    "This browser no longer has its push subscription; enable notifications again."
                        .into(),
                );
            };
            match store.register(subscription, events).await {
                Ok(()) => {
                    store.push_busy(false);
                    store.refresh_devices();
                }
                Err(e) => store.push_failed(e),
            }
        });
    }

    /// Sends a test notification to this device and says what happened.
    pub fn test_push(&self) {
        let Some(id) = self
            .push
            .with_untracked(|p| p.device.as_ref().map(|d| d.subscription_id.clone()))
        else {
            return;
        };
        self.push.update(|p| p.test_result = None);
        self.push_busy(true);
        let store = *self;
        leptos::task::spawn_local(async move {
            let result = match net::test_push_device(&id).await {
                Ok(answer) => Ok(test_summary(&answer)),
                Err(e) => Err(format!("The test was not sent: {e}")),
            };
            store.push.try_update(|p| {
                p.busy = false;
                p.test_result = Some(result);
            });
            store.refresh_devices();
        });
    }

    /// Removes a device from the relay; for this device, also drops the browser's subscription.
    pub fn remove_device(&self, id: &str) {
        let id = id.to_string();
        let mine = self
            .push
            .with_untracked(|p| p.device.as_ref().is_some_and(|d| d.subscription_id == id));
        self.push_busy(true);
        let store = *self;
        leptos::task::spawn_local(async move {
            match net::remove_push_device(&id).await {
                Ok(()) | Err(NetError::Status(404, _)) => {
                    if mine {
                        pwa::unsubscribe().await;
                        pwa::forget_device().await;
                        store.push.try_update(|p| p.device = None);
                    }
                    store.push_busy(false);
                }
                Err(e) => store.push_failed(format!("The device was not removed: {e}")),
            }
            store.refresh_devices();
        });
    }

    /// Turns on notifications shown by this page while it is open in the background (asks for the
    /// permission now, inside the click).
    pub fn enable_in_page(&self) {
        let asked = pwa::request_permission();
        let store = *self;
        leptos::task::spawn_local(async move {
            let permission = asked.await;
            let on = permission == Permission::Granted;
            pwa::set_in_page_enabled(on);
            store.push.try_update(|p| {
                p.caps.permission = permission;
                p.in_page = on;
                p.error = (!on).then(|| "Notifications were not allowed.".to_string());
            });
        });
    }

    /// Turns in-page notifications off.
    pub fn disable_in_page(&self) {
        pwa::set_in_page_enabled(false);
        self.push.update(|p| p.in_page = false);
    }
}

impl Store {
    // ------------------------------------------------------------------ in-page notifications

    /// While the page is hidden and in-page notifications are on, a prompt that starts waiting in
    /// the open session shows a notification (one per session: a newer one replaces it). Call once,
    /// inside the app's reactive owner.
    pub fn watch_prompts(&self, open: Rc<dyn Fn(String)>) {
        let store = *self;
        let seen = StoredValue::new(std::collections::HashSet::<String>::new());
        Effect::new(move |_| {
            let prompts: Vec<(String, String)> = store.session.with(|s| {
                s.open_prompts()
                    .map(|p| (p.request_id.clone(), p.summary()))
                    .collect()
            });
            let Some(sid) = store.session_id.get_untracked() else {
                return;
            };
            let fresh: Vec<(String, String)> = seen
                .try_update_value(|seen| {
                    prompts
                        .into_iter()
                        .filter(|(rid, _)| seen.insert(format!("{sid}/{rid}")))
                        .collect()
                })
                .unwrap_or_default();
            if fresh.is_empty()
                || !crate::dom::page_hidden()
                || !store.device.push.with_untracked(PushState::in_page_active)
            {
                return;
            }
            if let Some((_, body)) = fresh.last() {
                notify_in_page(body.clone(), &sid, open.clone());
            }
        });
    }
}

/// "Claude needs you" from the page itself for session `sid` (one notification a session: a newer one
/// replaces it); `open` is called with the session's path when it is clicked. The code that shows it
/// is the settings part's (`split_entry::show_in_page`): it runs once that is in.
fn notify_in_page(body: String, sid: &str, open: Rc<dyn Fn(String)>) {
    let note = super::split_entry::InPageNote {
        title: "Claude needs you".to_string(),
        body,
        tag: format!("bridge:{sid}:inpage"),
        url: crate::nav::session_path(sid),
        on_click: open,
    };
    crate::lazy::when_loaded(crate::lazy::Part::Settings, move || {
        super::split_entry::show_in_page(note)
    });
}

/// What a test push did, from the relay's answer (the push service's status; a refusal is an
/// error answer, not this).
pub fn test_summary(answer: &PushTestAnswer) -> String {
    format!(
        "Sent: the push service answered {}. A notification should appear.",
        answer.status
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready_caps() -> Capabilities {
        Capabilities {
            secure_context: true,
            service_worker: true,
            push_manager: true,
            notification: true,
            permission: Permission::Granted,
            ..Capabilities::default()
        }
    }

    #[test]
    fn the_panel_status_follows_support_device_and_push_service() {
        let mut p = PushState {
            caps: ready_caps(),
            ..PushState::default()
        };
        assert_eq!(p.status(), "off");
        assert!(!p.offer_in_page(), "push can work: no fallback offered");
        p.unreachable = Some("push service error".into());
        assert_eq!(p.status(), "unreachable");
        assert!(p.offer_in_page());
        p.device = Some(DeviceRecord::default());
        assert_eq!(p.status(), "enabled");
        assert!(!p.offer_in_page());
        p.caps.secure_context = false;
        assert_eq!(p.status(), "insecure");
        let ios = PushState {
            caps: Capabilities {
                ios: true,
                permission: Permission::Default,
                ..ready_caps()
            },
            ..PushState::default()
        };
        assert_eq!(ios.status(), "ios-home-screen");
        assert!(ios.offer_in_page());
    }

    #[test]
    fn in_page_notifications_stand_in_only_without_push() {
        let mut p = PushState {
            caps: ready_caps(),
            in_page: true,
            ..PushState::default()
        };
        assert!(p.in_page_active());
        p.device = Some(DeviceRecord::default());
        assert!(!p.in_page_active(), "the service worker shows them");
        p.device = None;
        p.caps.permission = Permission::Default;
        assert!(!p.in_page_active());
    }

    #[test]
    fn a_test_result_names_the_push_services_status() {
        assert_eq!(
            test_summary(&PushTestAnswer {
                delivered: true,
                status: 201
            }),
            "Sent: the push service answered 201. A notification should appear."
        );
    }
}
