//! The service worker: registration, the page's hooks it calls, and "new version" updates.

use std::rc::Rc;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::SW_URL;
use super::browser::{get, js_error, registration_of, sw_container, window};

/// What the page hands the service worker: a new build is waiting (`on_update`), the path a click
/// on a notification opens (`on_navigate`), and which session the page shows (`showing`: the
/// service worker asks before it shows a push, and shows nothing when a focused window has it open).
pub struct SwHooks {
    /// A new build installed and waits.
    pub on_update: Rc<dyn Fn()>,
    /// Open this path (`/s/<id>`).
    pub on_navigate: Rc<dyn Fn(String)>,
    /// The session shown now, if any.
    pub showing: Rc<dyn Fn() -> Option<String>>,
}

pub(super) fn reply(ev: &web_sys::MessageEvent, value: &JsValue) {
    let port = ev.ports().get(0);
    if let Ok(post) = get(&port, "postMessage").dyn_into::<js_sys::Function>() {
        let _ = post.call1(&port, value);
    }
}

/// Registers `/sw.js` (scope `/`) and reports, through `hooks.on_update`, a new build that installed
/// and waits (never when the first one installs). Checks for a new build every 30 minutes and when
/// the page becomes visible again. Answers the service worker's messages: `bridge:navigate` (open a
/// path) and `bridge:which-session` (reply `{session_id, visible}` on the port it sent).
pub fn register_service_worker(hooks: SwHooks) {
    let Some(container) = sw_container() else {
        return;
    };
    let SwHooks {
        on_update,
        on_navigate,
        showing,
    } = hooks;
    let on_message =
        Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            let data = ev.data();
            match get(&data, "type").as_string().as_deref() {
                Some("bridge:navigate") => {
                    if let Some(url) = get(&data, "url").as_string()
                        && url.starts_with('/')
                        && !url.starts_with("//")
                    {
                        on_navigate(url);
                    }
                }
                Some("bridge:which-session") => {
                    let answer = js_sys::Object::new();
                    let sid = showing().map_or(JsValue::NULL, |s| JsValue::from_str(&s));
                    let _ = js_sys::Reflect::set(&answer, &"session_id".into(), &sid);
                    let visible = JsValue::from_bool(!crate::dom::page_hidden());
                    let _ = js_sys::Reflect::set(&answer, &"visible".into(), &visible);
                    reply(&ev, &answer);
                }
                _ => {}
            }
        });
    container.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let opts = web_sys::RegistrationOptions::new();
    opts.set_scope("/");
    let promise = container.register_with_options(SW_URL, &opts);
    leptos::task::spawn_local(async move {
        let reg = match JsFuture::from(promise).await {
            Ok(r) => r.unchecked_into::<web_sys::ServiceWorkerRegistration>(),
            Err(e) => {
                leptos::logging::warn!("service worker registration failed: {:?}", js_error(&e));
                return;
            }
        };
        watch_updates(&container, &reg, on_update);
        let check = {
            let reg = reg.clone();
            move || {
                if let Ok(p) = reg.update() {
                    // A failed check (offline) only means no news.
                    leptos::task::spawn_local(async move {
                        let _ = JsFuture::from(p).await;
                    });
                }
            }
        };
        let check2 = check.clone();
        gloo_timers::callback::Interval::new(30 * 60 * 1000, check).forget();
        let on_visible = Closure::<dyn Fn()>::new(move || {
            if !crate::dom::page_hidden() {
                check2();
            }
        });
        if let Some(doc) = window().and_then(|w| w.document()) {
            let _ = doc.add_event_listener_with_callback(
                "visibilitychange",
                on_visible.as_ref().unchecked_ref(),
            );
        }
        on_visible.forget();
    });
}

pub(super) fn watch_updates(
    container: &web_sys::ServiceWorkerContainer,
    reg: &web_sys::ServiceWorkerRegistration,
    on_update: Rc<dyn Fn()>,
) {
    // A worker that installed while an older one controls this page is a new build; the very
    // first install (no controller yet) is not.
    if reg.waiting().is_some() && container.controller().is_some() {
        on_update();
    }
    let reg2 = reg.clone();
    let container = container.clone();
    let on_found = Closure::<dyn Fn()>::new(move || {
        let Some(worker) = reg2.installing() else {
            return;
        };
        let w2 = worker.clone();
        let container = container.clone();
        let on_update = on_update.clone();
        let on_state = Closure::<dyn Fn()>::new(move || {
            if w2.state() == web_sys::ServiceWorkerState::Installed
                && container.controller().is_some()
            {
                on_update();
            }
        });
        worker.set_onstatechange(Some(on_state.as_ref().unchecked_ref()));
        on_state.forget();
    });
    reg.set_onupdatefound(Some(on_found.as_ref().unchecked_ref()));
    on_found.forget();
}

/// Switches to the waiting build: tells it to take over (`SKIP_WAITING`) and reloads the page when
/// it has (`controllerchange`). Reloads at once if nothing waits.
pub fn activate_update() {
    let reload = || {
        if let Some(w) = window() {
            let _ = w.location().reload();
        }
    };
    let Some(container) = sw_container() else {
        return reload();
    };
    let on_change = Closure::<dyn Fn()>::new(reload);
    container.set_oncontrollerchange(Some(on_change.as_ref().unchecked_ref()));
    on_change.forget();
    let registration = registration_of(container.get_registration());
    leptos::task::spawn_local(async move {
        let waiting = registration.await.and_then(|r| r.waiting());
        match waiting {
            Some(w) => {
                let msg = js_sys::Object::new();
                let _ = js_sys::Reflect::set(&msg, &"type".into(), &"SKIP_WAITING".into());
                if w.post_message(&msg).is_err() {
                    reload();
                }
            }
            None => reload(),
        }
    });
}
