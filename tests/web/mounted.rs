//! A component mounted for a browser test (web.rs, web_pwa.rs), and finding what it renders.
// Each test binary uses a part of this.
#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;

use bridge_console::nav::Nav;
use bridge_console::net::{NetError, Sender};
use bridge_console::store::Store;
use futures::future::LocalBoxFuture;
use leptos::prelude::*;
use serde_json::Value;
use wasm_bindgen::JsCast;

/// Records what the console would post.
#[derive(Default)]
pub struct FakeSender {
    pub sent: Rc<RefCell<Vec<Value>>>,
}

impl Sender for FakeSender {
    fn post_event(
        &self,
        _session_id: &str,
        payload: Value,
    ) -> LocalBoxFuture<'static, Result<(), NetError>> {
        self.sent.borrow_mut().push(payload);
        Box::pin(async { Ok(()) })
    }
}

/// What a test mounted: removed from the page when dropped.
pub struct Mounted {
    pub root: web_sys::HtmlElement,
    pub store: Store,
    pub nav: Nav,
    /// What the store posted.
    pub sent: Rc<RefCell<Vec<Value>>>,
    _handle: Box<dyn std::any::Any>,
}

impl Mounted {
    pub fn all(&self, selector: &str) -> Vec<web_sys::Element> {
        let list = self.root.query_selector_all(selector).unwrap();
        (0..list.length())
            .filter_map(|i| list.item(i))
            .filter_map(|n| n.dyn_into().ok())
            .collect()
    }
    pub fn one(&self, selector: &str) -> web_sys::HtmlElement {
        self.root
            .query_selector(selector)
            .unwrap()
            .unwrap_or_else(|| panic!("no element matches {selector}"))
            .dyn_into()
            .unwrap()
    }
    pub fn has(&self, selector: &str) -> bool {
        !self.all(selector).is_empty()
    }
    pub fn text(&self, selector: &str) -> String {
        self.one(selector).text_content().unwrap_or_default()
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        self.root.remove();
    }
}

/// Asserts that `el` has the attribute `name`, valued `want`.
#[track_caller]
pub fn assert_attr(el: &web_sys::Element, name: &str, want: &str) {
    assert_eq!(el.get_attribute(name).as_deref(), Some(want), "{name}");
}

/// A new element at the end of the page, to mount in.
pub fn new_root() -> web_sys::HtmlElement {
    let doc = document();
    let root: web_sys::HtmlElement = doc.create_element("div").unwrap().dyn_into().unwrap();
    doc.body().unwrap().append_child(&root).unwrap();
    root
}

/// Mounts `view` in `root` under a fresh store (recording what it posts, session "s1" open) and a
/// router; `setup` prepares the store first.
pub fn mount_in<V: IntoView + 'static>(
    root: web_sys::HtmlElement,
    setup: impl FnOnce(Store) + 'static,
    view: impl FnOnce() -> V + 'static,
) -> Mounted {
    let sender = FakeSender::default();
    let sent = sender.sent.clone();
    let slot: Rc<RefCell<Option<(Store, Nav)>>> = Rc::default();
    let slot2 = slot.clone();
    let handle = leptos::mount::mount_to(root.clone(), move || {
        let store = Store::new(Rc::new(sender)).provide();
        let nav = Nav::new(Some("s1".to_string()));
        provide_context(nav);
        store.session_id.set(Some("s1".into()));
        setup(store);
        *slot2.borrow_mut() = Some((store, nav));
        view()
    });
    let (store, nav) = slot.borrow_mut().take().unwrap();
    Mounted {
        root,
        store,
        nav,
        sent,
        _handle: Box::new(handle),
    }
}
