//! Web Push on this device: the subscription, the device record and login secret kept in Cache
//! Storage for the service worker, and notifications the page shows itself.

use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::browser::{get, js_error, permission, registration_of, sw_container, window};
use super::{
    DEVICE_CACHE, DEVICE_KEY, DeviceRecord, Permission, PushError, base64url_decode,
    classify_subscribe_error,
};

pub(super) async fn ready_registration() -> Result<web_sys::ServiceWorkerRegistration, PushError> {
    let container = sw_container()
        .ok_or_else(|| PushError::Other("this browser has no service worker".into()))?;
    let ready = container
        .ready()
        .map_err(|e| PushError::Other(js_error(&e).1))?;
    // `ready` never settles when registration failed: give it a while.
    let timeout = gloo_timers::future::TimeoutFuture::new(10_000);
    futures::pin_mut!(timeout);
    let ready = JsFuture::from(ready);
    futures::pin_mut!(ready);
    match futures::future::select(ready, timeout).await {
        futures::future::Either::Left((Ok(r), _)) => Ok(r.unchecked_into()),
        futures::future::Either::Left((Err(e), _)) => Err(PushError::Other(js_error(&e).1)),
        futures::future::Either::Right(_) => Err(PushError::Other(
            "the service worker did not start (reload the page and try again)".into(),
        )),
    }
}

pub(super) fn subscription_json(sub: &JsValue) -> Result<Value, PushError> {
    let text = js_sys::JSON::stringify(sub)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| PushError::Other("the push subscription could not be read".into()))?;
    serde_json::from_str(&text).map_err(|e| PushError::Other(e.to_string()))
}

/// This browser's current push subscription (`PushSubscription.toJSON()`), if any.
pub async fn current_subscription() -> Option<Value> {
    let reg = ready_registration().await.ok()?;
    let pm = reg.push_manager().ok()?;
    let sub = JsFuture::from(pm.get_subscription().ok()?).await.ok()?;
    if sub.is_null() || sub.is_undefined() {
        return None;
    }
    subscription_json(&sub).ok()
}

/// Subscribes this browser to push with the relay's VAPID key (base64url) and returns
/// `PushSubscription.toJSON()`. A subscription made for another key is replaced.
pub async fn subscribe(vapid_key: &str) -> Result<Value, PushError> {
    let key = base64url_decode(vapid_key)
        .filter(|k| k.len() == 65)
        .ok_or_else(|| {
            PushError::Other("the relay's VAPID key is not a P-256 public key".into())
        })?;
    let reg = ready_registration().await?;
    let pm = reg
        .push_manager()
        .map_err(|e| PushError::Other(js_error(&e).1))?;
    let opts = web_sys::PushSubscriptionOptionsInit::new();
    opts.set_user_visible_only(true);
    let key_array = js_sys::Uint8Array::from(key.as_slice());
    opts.set_application_server_key(&key_array);
    let attempt = |pm: &web_sys::PushManager| {
        let p = pm.subscribe_with_options(&opts);
        async move {
            match p {
                Ok(p) => JsFuture::from(p).await,
                Err(e) => Err(e),
            }
        }
    };
    let sub = match attempt(&pm).await {
        Ok(s) => s,
        Err(e) if js_error(&e).0 == "InvalidStateError" => {
            // Subscribed earlier with another key (the relay's data dir was replaced): start over.
            unsubscribe().await;
            attempt(&pm).await.map_err(|e| {
                let (n, m) = js_error(&e);
                classify_subscribe_error(&n, &m)
            })?
        }
        Err(e) => {
            let (n, m) = js_error(&e);
            return Err(classify_subscribe_error(&n, &m));
        }
    };
    subscription_json(&sub)
}

/// Drops this browser's push subscription (if any).
pub async fn unsubscribe() {
    let Ok(reg) = ready_registration().await else {
        return;
    };
    let Ok(pm) = reg.push_manager() else { return };
    let Some(p) = pm.get_subscription().ok() else {
        return;
    };
    let Ok(sub) = JsFuture::from(p).await else {
        return;
    };
    // Called by name, not through `PushSubscription`: anything with the same methods will do.
    if let Ok(f) = get(&sub, "unsubscribe").dyn_into::<js_sys::Function>()
        && let Ok(p) = f.call0(&sub)
        && let Ok(p) = p.dyn_into::<js_sys::Promise>()
    {
        let _ = JsFuture::from(p).await;
    }
}

pub(super) async fn device_cache() -> Option<web_sys::Cache> {
    let caches = window()?.caches().ok()?;
    JsFuture::from(caches.open(DEVICE_CACHE))
        .await
        .ok()
        .map(JsCast::unchecked_into)
}

/// Keeps this device's subscription where the service worker reads it.
pub async fn save_device(record: &DeviceRecord) {
    let Some(cache) = device_cache().await else {
        return;
    };
    let Ok(json) = serde_json::to_string(record) else {
        return;
    };
    let init = web_sys::ResponseInit::new();
    let headers = web_sys::Headers::new().ok();
    if let Some(h) = &headers {
        let _ = h.set("content-type", "application/json");
        init.set_headers(h);
    }
    if let Ok(resp) = web_sys::Response::new_with_opt_str_and_init(Some(&json), &init) {
        let _ = JsFuture::from(cache.put_with_str(DEVICE_KEY, &resp)).await;
    }
}

/// Cache Storage key (in [`DEVICE_CACHE`]) of `{"login_secret": "…"}`: the service worker sends it
/// in `X-Bridge-Login` with `POST /v1/push/answer` (the login cookie alone is refused).
pub const LOGIN_KEY: &str = "/__bridge/login";

/// Mirrors the login secret where the service worker reads it; `None` forgets it (logout).
pub async fn mirror_login_secret(secret: Option<String>) {
    let Some(cache) = device_cache().await else {
        return;
    };
    let Some(secret) = secret else {
        let _ = JsFuture::from(cache.delete_with_str(LOGIN_KEY)).await;
        return;
    };
    let json = serde_json::json!({ "login_secret": secret }).to_string();
    let init = web_sys::ResponseInit::new();
    if let Ok(h) = web_sys::Headers::new() {
        let _ = h.set("content-type", "application/json");
        init.set_headers(&h);
    }
    if let Ok(resp) = web_sys::Response::new_with_opt_str_and_init(Some(&json), &init) {
        let _ = JsFuture::from(cache.put_with_str(LOGIN_KEY, &resp)).await;
    }
}

/// This device's subscription as last saved.
pub async fn load_device() -> Option<DeviceRecord> {
    let cache = device_cache().await?;
    let resp = JsFuture::from(cache.match_with_str(DEVICE_KEY))
        .await
        .ok()?;
    let resp = resp.dyn_into::<web_sys::Response>().ok()?;
    let text = JsFuture::from(resp.text().ok()?).await.ok()?.as_string()?;
    serde_json::from_str(&text).ok()
}

/// Forgets this device's subscription.
pub async fn forget_device() {
    if let Some(cache) = device_cache().await {
        let _ = JsFuture::from(cache.delete_with_str(DEVICE_KEY)).await;
    }
}

/// Shows a notification from the page (the fallback where push cannot work): through the service
/// worker when one is active (its click handler focuses this window on `url`), else with
/// `new Notification` (a click focuses this window and calls `on_click`).
pub fn show_local_notification(
    title: &str,
    body: &str,
    tag: &str,
    url: &str,
    on_click: Rc<dyn Fn(String)>,
) {
    if permission() != Permission::Granted {
        return;
    }
    let opts = web_sys::NotificationOptions::new();
    opts.set_body(body);
    opts.set_tag(tag);
    opts.set_icon("/icons/icon-192.png");
    let data =
        serde_json::json!({"v": 1, "type": "local", "url": url, "title": title, "body": body});
    // A plain object (not a Map): the service worker's click handler reads `data.url`.
    if let Ok(d) = js_sys::JSON::parse(&data.to_string()) {
        opts.set_data(&d);
    }
    let sw_title = title.to_string();
    let title = title.to_string();
    let url = url.to_string();
    let fallback = move |opts: &web_sys::NotificationOptions| {
        if let Ok(n) = web_sys::Notification::new_with_options(&title, opts) {
            let n2 = n.clone();
            let cb = Closure::<dyn Fn()>::new(move || {
                if let Some(w) = window() {
                    let _ = w.focus();
                }
                n2.close();
                on_click(url.clone());
            });
            n.set_onclick(Some(cb.as_ref().unchecked_ref()));
            cb.forget();
        }
    };
    let Some(container) = sw_container().filter(|c| c.controller().is_some()) else {
        return fallback(&opts);
    };
    let registration = registration_of(container.get_registration());
    leptos::task::spawn_local(async move {
        let reg = registration.await;
        let shown = match reg.map(|r| r.show_notification_with_options(&sw_title, &opts)) {
            Some(Ok(p)) => JsFuture::from(p).await.is_ok(),
            _ => false,
        };
        if !shown {
            fallback(&opts);
        }
    });
}
