//! The browser side of embedding: `postMessage` with the embedding page (only origins the relay
//! lists with --embed-origin), the native webview bridges (`webkit.messageHandlers.bridgeConsole`,
//! `BridgeConsoleAndroid`, and `window.bridgeConsole.receive(json)` for the app's answers), the
//! document's height, links opened by the host, and the theme. The rules live in [`super`].

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use leptos::prelude::*;
use serde_json::Value;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};

use super::{
    ConsoleMessage, HostMessage, Snapshot, Switches, Theme, Tracker, origin_of, parse_host_message,
    target_origins,
};
use crate::nav::Nav;
use crate::state::ItemKind;
use crate::store::Store;

/// How many of the latest turn results the tracker looks at, and how far back it looks for them.
const RESULTS: usize = 8;
const SCAN: usize = 500;

#[derive(Default)]
struct Link {
    /// Origins that may talk to this console (None until the relay answered).
    allowed: RefCell<Option<Vec<String>>>,
    /// The embedding page's origin, when known.
    parent: RefCell<Option<String>>,
    /// This page is in a frame.
    framed: Cell<bool>,
}

fn get(target: &JsValue, key: &str) -> Option<JsValue> {
    js_sys::Reflect::get(target, &JsValue::from_str(key))
        .ok()
        .filter(|v| !v.is_undefined() && !v.is_null())
}

/// `console.debug(msg)`.
fn debug(msg: &str) {
    if let Some(f) = get(&js_sys::global(), "console")
        .and_then(|c| get(&c, "debug").map(|f| (c, f)))
        .and_then(|(c, f)| f.dyn_into::<js_sys::Function>().ok().map(|f| (c, f)))
    {
        let _ =
            f.1.call1(&f.0, &JsValue::from_str(&format!("bridge console: {msg}")));
    }
}

/// The native bridges present: (object, its `postMessage`).
fn native_targets() -> Vec<(JsValue, js_sys::Function)> {
    let w: JsValue = js_sys::global().into();
    let ios = get(&w, "webkit")
        .and_then(|k| get(&k, "messageHandlers"))
        .and_then(|h| get(&h, "bridgeConsole"));
    let android = get(&w, "BridgeConsoleAndroid");
    [ios, android]
        .into_iter()
        .flatten()
        .filter_map(|o| {
            let f = get(&o, "postMessage")?
                .dyn_into::<js_sys::Function>()
                .ok()?;
            Some((o, f))
        })
        .collect()
}

fn framed() -> bool {
    let Some(w) = web_sys::window() else {
        return false;
    };
    match w.parent() {
        Ok(Some(p)) => JsValue::from(p) != JsValue::from(w),
        _ => false,
    }
}

/// The embedding page's origin, when the browser tells: `location.ancestorOrigins` (Chromium,
/// WebKit), else the referrer.
fn parent_origin() -> Option<String> {
    let w = web_sys::window()?;
    let from_ancestors = get(&w.location().into(), "ancestorOrigins")
        .and_then(|list| js_sys::Reflect::get_u32(&list, 0).ok())
        .and_then(|o| o.as_string());
    from_ancestors
        .or_else(|| w.document().map(|d| d.referrer()))
        .and_then(|u| origin_of(&u))
}

impl Link {
    fn post(&self, msg: &ConsoleMessage) {
        let json = msg.to_value().to_string();
        for (obj, f) in native_targets() {
            let _ = f.call1(&obj, &JsValue::from_str(&json));
        }
        if !self.framed.get() {
            return;
        }
        let origins = match &*self.allowed.borrow() {
            Some(allowed) => target_origins(self.parent.borrow().as_deref(), allowed),
            None => return,
        };
        let (Some(parent), Ok(data)) = (
            web_sys::window().and_then(|w| w.parent().ok().flatten()),
            js_sys::JSON::parse(&json),
        ) else {
            return;
        };
        for origin in origins {
            let _ = parent.post_message(&data, &origin);
        }
    }

    /// Whether a message posted now reaches anyone.
    fn reaches_someone(&self) -> bool {
        !native_targets().is_empty()
            || (self.framed.get()
                && self.allowed.borrow().as_ref().is_some_and(|a| {
                    !target_origins(self.parent.borrow().as_deref(), a).is_empty()
                }))
    }
}

/// Sets `data-theme` on `<html>` (removed for `auto`).
pub fn apply_theme(theme: Theme) {
    let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    else {
        return;
    };
    let _ = match theme.attribute() {
        Some(t) => root.set_attribute("data-theme", t),
        None => root.remove_attribute("data-theme"),
    };
}

/// Reads a message's data (an object, or JSON text) as JSON; anything else is `Null`.
fn data_value(data: &JsValue) -> Value {
    if let Some(s) = data.as_string() {
        return Value::String(s);
    }
    js_sys::JSON::stringify(data)
        .ok()
        .and_then(|s| s.as_string())
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null)
}

fn snapshot(store: Store) -> Snapshot {
    let (prompts, results, session_state) = store.session.with(|s| {
        let prompts = s
            .prompts()
            .iter()
            .map(|p| (p.request_id.clone(), p.tool_name.clone(), p.summary()))
            .collect();
        let mut results = Vec::new();
        for key in s.order().iter().rev().take(SCAN) {
            if let Some(ItemKind::Result(r)) = s.item(key).map(|i| &i.kind) {
                results.push((key.clone(), r.turn_cost, r.duration_ms));
                if results.len() == RESULTS {
                    break;
                }
            }
        }
        results.reverse();
        (prompts, results, s.state().as_str().to_string())
    });
    Snapshot {
        session_id: store.session_id.get(),
        connection: store.conn.with(|c| c.as_str().to_string()),
        session_state,
        caught_up: store.caught_up.get(),
        prompts,
        results,
    }
}

/// What [`install`] hands to the bridge once its code is in.
struct Pending {
    store: Store,
    nav: Nav,
    on_auth: Rc<dyn Fn(String)>,
    owner: Option<Owner>,
}

thread_local! {
    /// The bridge waiting for its part (taken when it starts).
    static PENDING: RefCell<Option<Pending>> = const { RefCell::new(None) };
    /// Native messages (`window.bridgeConsole.receive`) that came before the bridge was in, in order.
    static EARLY: RefCell<Vec<JsValue>> = const { RefCell::new(Vec::new()) };
}

/// Installs the host bridge: applies the switches' theme and layout, defines
/// `window.bridgeConsole.receive`, and — in a frame or a native webview — reads the allowed
/// origins from the relay, says `ready`, then reports state, prompts, turns, height and links.
/// `on_auth` gets a token the host hands over.
///
/// The bridge's code is the embed part (src/lazy.rs): it loads at once in embed mode, a frame or a
/// native webview; in a plain tab only when `window.bridgeConsole.receive` is called. Until it is
/// in, `receive` keeps what it is given and the bridge handles it, in order, once it starts.
pub fn install(switches: &Switches, store: Store, nav: Nav, on_auth: Rc<dyn Fn(String)>) {
    if let Some(t) = switches.theme {
        apply_theme(t);
    }
    let doc = web_sys::window().and_then(|w| w.document());
    if switches.embed
        && let Some(root) = doc.as_ref().and_then(|d| d.document_element())
    {
        let _ = root.set_attribute("data-embed", "1");
    }
    PENDING.set(Some(Pending {
        store,
        nav,
        on_auth,
        owner: Owner::current(),
    }));
    let receive = Closure::<dyn Fn(JsValue)>::new(move |data: JsValue| {
        EARLY.with_borrow_mut(|e| e.push(data));
        start();
    });
    let obj = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&obj, &"receive".into(), receive.as_ref());
    let _ = js_sys::Reflect::set(&js_sys::global(), &"bridgeConsole".into(), &obj);
    receive.forget();
    if switches.embed || framed() || !native_targets().is_empty() {
        start();
    }
}

/// Loads the embed part (once) and starts the bridge in it.
fn start() {
    thread_local! {
        static STARTED: Cell<bool> = const { Cell::new(false) };
    }
    if STARTED.replace(true) {
        return;
    }
    #[cfg(all(feature = "split", target_family = "wasm"))]
    split_entry::register();
    crate::lazy::when_loaded(crate::lazy::Part::Embed, || {
        if let Some(p) = PENDING.take() {
            #[cfg(all(feature = "split", target_family = "wasm"))]
            split_entry::run_now(p.store, p.nav, p.on_auth, p.owner);
            #[cfg(not(all(feature = "split", target_family = "wasm")))]
            run(p.store, p.nav, p.on_auth, p.owner);
        }
    });
}

/// The embed part's entry point (src/lazy.rs says how parts load; [`start`] registers it).
#[cfg(all(feature = "split", target_family = "wasm"))]
mod split_entry {
    use std::rc::Rc;

    use leptos::prelude::Owner;
    use leptos::wasm_split::SplitLoaderError;

    use crate::nav::Nav;
    use crate::store::Store;

    #[leptos::wasm_split::wasm_split(embed, wasm_split_path = ::leptos::wasm_split, preload(preload_embed), fallible)]
    fn embed(
        store: Store,
        nav: Nav,
        on_auth: Rc<dyn Fn(String)>,
        owner: Option<Owner>,
    ) -> Result<(), SplitLoaderError> {
        super::run(store, nav, on_auth, owner);
        Ok(())
    }

    pub fn run_now(store: Store, nav: Nav, on_auth: Rc<dyn Fn(String)>, owner: Option<Owner>) {
        crate::lazy::now(embed(store, nav, on_auth, owner));
    }

    /// Says how the embed part loads ([`super::start`] calls it once, before it asks for the part).
    pub fn register() {
        crate::lazy::register(crate::lazy::Part::Embed, || Box::pin(preload_embed()));
    }
}

/// The bridge itself ([`install`]; the embed part's code).
fn run(store: Store, nav: Nav, on_auth: Rc<dyn Fn(String)>, owner: Option<Owner>) {
    match owner {
        Some(owner) => owner.with(|| bridge(store, nav, on_auth)),
        None => bridge(store, nav, on_auth),
    }
}

fn bridge(store: Store, nav: Nav, on_auth: Rc<dyn Fn(String)>) {
    let doc = web_sys::window().and_then(|w| w.document());
    let link = Rc::new(Link::default());
    link.framed.set(framed());
    *link.parent.borrow_mut() = parent_origin();
    let handle = {
        let on_auth = on_auth.clone();
        Rc::new(move |msg: HostMessage| match msg {
            HostMessage::OpenSession { session_id } => nav.go(Some(&session_id)),
            HostMessage::Send { text } => {
                if store.send_prompt(&text).is_none() {
                    debug("send ignored: this console is read-only");
                }
            }
            HostMessage::SetTheme(t) => apply_theme(t),
            HostMessage::Auth { token } => on_auth(token),
        })
    };
    // Native bridges: trusted (the app that embeds the webview controls it).
    {
        let handle = handle.clone();
        let receive =
            Closure::<dyn Fn(JsValue)>::new(move |data: JsValue| {
                match parse_host_message(&data_value(&data)) {
                    Ok(m) => handle(m),
                    Err(e) => debug(&format!("ignored a native message: {e}")),
                }
            });
        let obj = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&obj, &"receive".into(), receive.as_ref());
        let _ = js_sys::Reflect::set(&js_sys::global(), &"bridgeConsole".into(), &obj);
        receive.forget();
    }
    // What came before the bridge was in.
    for data in EARLY.take() {
        match parse_host_message(&data_value(&data)) {
            Ok(m) => handle(m),
            Err(e) => debug(&format!("ignored a native message: {e}")),
        }
    }
    // Frames: only listed origins.
    {
        let link = link.clone();
        let handle = handle.clone();
        let listener = window_event_listener_untyped("message", move |ev| {
            let Ok(ev) = ev.dyn_into::<web_sys::MessageEvent>() else {
                return;
            };
            let origin = ev.origin();
            let listed = link
                .allowed
                .borrow()
                .as_ref()
                .is_some_and(|a| super::accepts(&origin, a));
            if !listed {
                debug(&format!(
                    "ignored a message from {origin:?}: not an --embed-origin"
                ));
                return;
            }
            match parse_host_message(&data_value(&ev.data())) {
                Ok(m) => {
                    if link.parent.borrow().is_none() {
                        *link.parent.borrow_mut() = Some(origin);
                    }
                    handle(m);
                }
                Err(e) => debug(&format!("ignored a message from {origin}: {e}")),
            }
        });
        on_cleanup(move || listener.remove());
    }
    if !link.framed.get() && native_targets().is_empty() {
        return;
    }
    // The document's height, for a host that sizes its iframe (from `ready` on).
    let root = doc.as_ref().and_then(|d| d.document_element());
    let height: Rc<dyn Fn()> = {
        let last = Rc::new(Cell::new(0u32));
        let link = link.clone();
        let root = root.clone();
        Rc::new(move || {
            let Some(root) = &root else { return };
            if link.allowed.borrow().is_none() {
                return;
            }
            let px = root.scroll_height().max(0) as u32;
            if px != last.replace(px) {
                link.post(&ConsoleMessage::Height { px });
            }
        })
    };
    if let Some(root) = &root {
        let height = height.clone();
        let cb = Closure::<dyn Fn()>::new(move || height());
        if let Ok(ro) = web_sys::ResizeObserver::new(cb.as_ref().unchecked_ref()) {
            ro.observe(root);
            std::mem::forget(ro);
        }
        cb.forget();
    }
    let started = RwSignal::new(false);
    {
        let link = link.clone();
        leptos::task::spawn_local(async move {
            let allowed = match store.embed_origins().await {
                Ok(a) => a,
                Err(e) => {
                    debug(&format!("no embed origins: {e}"));
                    Vec::new()
                }
            };
            *link.allowed.borrow_mut() = Some(allowed);
            link.post(&ConsoleMessage::Ready);
            started.try_set(true);
            height();
        });
    }
    let tracker = StoredValue::new_local(Tracker::default());
    {
        let link = link.clone();
        Effect::new(move |_| {
            if !started.get() {
                return;
            }
            let snap = snapshot(store);
            let out = tracker
                .try_update_value(|t| t.update(&snap))
                .unwrap_or_default();
            for m in &out {
                link.post(m);
            }
        });
    }
    let Some(doc) = doc else { return };
    // Links to other origins open outside: the host gets `open_link`.
    let here = web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default();
    let click = Closure::<dyn Fn(web_sys::Event)>::new(move |ev: web_sys::Event| {
        let Some(a) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest("a[href]").ok().flatten())
        else {
            return;
        };
        let Some(url) = get(&a, "href").and_then(|h| h.as_string()) else {
            return;
        };
        let external = origin_of(&url).is_some_and(|o| o != here.to_ascii_lowercase());
        if external && link.reaches_someone() {
            ev.prevent_default();
            link.post(&ConsoleMessage::OpenLink { url });
        }
    });
    let _ = doc.add_event_listener_with_callback_and_bool(
        "click",
        click.as_ref().unchecked_ref(),
        true,
    );
    click.forget();
}
