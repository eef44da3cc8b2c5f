//! The parts of the console that load lazily (issue 12): their code lives in separate wasm chunks
//! that `scripts/build-console.sh` splits off the main module with wasm-split, so the first load
//! carries only the runtime, transport, store, model and the session shell.
//!
//! A part's entry points are `#[wasm_split]` functions (Leptos re-exports the macro; it is what
//! `#[lazy]` expands to, here with one chunk per part instead of one per function). Calling one is
//! async: the first call fetches its chunk. The views need them synchronously, so each part has a
//! reactive "ready" flag: [`prefetch`] loads the chunk and sets it; until then a view shows a plain
//! fallback (markdown as plain text) and reads the flag, so it re-renders once the chunk is in.
//! [`prefetch_when_idle`] loads every part after the first paint, and [`prefetch`] is called again
//! as soon as a prompt arrives, so online a dialog never waits on the network.
//!
//! The views' own entry points (the dialogs, the settings panel, the session view, the new-session
//! form) live beside their views and tell this module how their part loads ([`register`], called
//! once at start by `crate::components::register_lazy_parts`): this module names no view. Each
//! such module writes its entry points once, in a `lazy_entries!` call.
//!
//! Without the `split` feature (`trunk serve`, native tests) the same functions call the code
//! directly, every part is ready from the start, and nothing changes.
//!
//! The macro writes an `extern "C"` import/export pair and `#[unsafe(no_mangle)]` for each entry
//! point (how wasm-split finds and rewires them); that generated code is the only `unsafe_code`
//! allowed in the crate.
#![allow(unsafe_code)]

use std::rc::Rc;

use bridge_protocol::api::SessionDetail;
use bridge_transport::Payload;
use serde_json::Value;

use crate::diff::DiffLine;
use crate::markdown::MdNode;
use crate::net::{StreamEvent, Subscription};
use crate::state::{Session, Source};

#[cfg(all(feature = "split", target_family = "wasm"))]
pub use split::{Preload, now, register};

/// Declares functions whose code lives in a lazily loaded part, beside their callers: each is
/// written once — its arguments, what it returns, its part and its body — and this writes the
/// function the callers call (split build: the part's `#[wasm_split]` entry point `$entry`, run
/// at once, so callers call it once the part is in — [`ready`], [`when_loaded`]; a function that
/// returns `T` returns `Option<T>`, `None` while the part is not loaded; without the split: the
/// body, directly), the module `split_entry` holding the entry points, and its `register`, which
/// `crate::components::register_lazy_parts` calls so that [`prefetch`] of a part loads them (the
/// entry's chunk is loaded by `$preload`).
///
/// ```ignore
/// lazy_entries! {
///     /// The form, or `None` while the settings part is not loaded.
///     fn lazy_form(state: FormState) -> AnyView, part settings / Settings,
///         entry form, preload preload_form { form_view(state) }
/// }
/// ```
macro_rules! lazy_entries {
    ($(
        $(#[$doc:meta])*
        $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?, part $part:tt / $Part:ident,
            entry $entry:ident, preload $preload:ident $body:block
    )+) => {
        $(
            $crate::lazy::lazy_entries!(@caller $(#[$doc])* $vis fn $name($($arg: $ty),*)
                $(-> $ret)?, $entry $body);
        )+

        /// This module's entry points into lazily loaded parts (src/lazy.rs says how parts load).
        #[cfg(all(feature = "split", target_family = "wasm"))]
        // (the macro's generated code is the only `unsafe_code`; a body is a block)
        #[allow(unsafe_code, unused_braces)]
        pub(crate) mod split_entry {
            use super::*;

            $(
                #[::leptos::wasm_split::wasm_split($part, wasm_split_path = ::leptos::wasm_split, preload($preload), fallible)]
                pub(super) fn $entry(
                    $($arg: $ty),*
                ) -> Result<$crate::lazy::lazy_entries!(@output $($ret)?), ::leptos::wasm_split::SplitLoaderError> {
                    Ok($body)
                }
            )+

            pub fn register() {
                $($crate::lazy::register($crate::lazy::Part::$Part, || Box::pin($preload()));)+
            }
        }
    };
    (@caller $(#[$doc:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty,
        $entry:ident $body:block) => {
        $(#[$doc])*
        #[allow(unused_braces)]
        $vis fn $name($($arg: $ty),*) -> Option<$ret> {
            #[cfg(all(feature = "split", target_family = "wasm"))]
            return $crate::lazy::now(split_entry::$entry($($arg),*));
            #[cfg(not(all(feature = "split", target_family = "wasm")))]
            Some($body)
        }
    };
    (@caller $(#[$doc:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*),
        $entry:ident $body:block) => {
        $(#[$doc])*
        $vis fn $name($($arg: $ty),*) {
            #[cfg(all(feature = "split", target_family = "wasm"))]
            $crate::lazy::now(split_entry::$entry($($arg),*));
            #[cfg(not(all(feature = "split", target_family = "wasm")))]
            $body
        }
    };
    (@output) => { () };
    (@output $ret:ty) => { $ret };
}
pub(crate) use lazy_entries;

/// True when the build is split (the `split` feature, wasm only).
pub const SPLIT: bool = cfg!(all(feature = "split", target_family = "wasm"));

/// The chunks: one per lazily loaded part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Markdown parsing (pulldown-cmark): every assistant message.
    Markdown,
    /// Line diffs (`similar`): edit tool cards, the permission dialog's preview.
    Diff,
    /// The prompt dialogs (permission with its input editor and suggestions, question, plan,
    /// elicitation, user dialog).
    Dialogs,
    /// What the session list does when asked, not on its first paint: the notification settings
    /// panel (and notifications the page shows itself), the new-session form and starting a
    /// session, archiving, discarding a kept worktree.
    Settings,
    /// The open session's view (header and its menus, transcript, message rows, tool cards,
    /// changes panel, task list, prompt dock, composer) and what decodes and applies its frames:
    /// the session list does not need it.
    Session,
    /// The open session's live connection (bridge-transport's SSE/WebSocket driver and outbox):
    /// small, so it connects while the session part is still loading.
    Live,
    /// The bridge with a host page or a native webview (`src/embed/host.rs`): loaded at once when
    /// the console is embedded, in a frame or a webview, never by [`prefetch_all`] otherwise.
    Embed,
}

impl Part {
    /// Every part [`prefetch_all`] loads (all but the embed part), in that order (the session view
    /// first: opening a session waits for it).
    pub const ALL: [Part; 6] = [
        Part::Session,
        Part::Live,
        Part::Markdown,
        Part::Dialogs,
        Part::Diff,
        Part::Settings,
    ];
}

#[cfg(all(feature = "split", target_family = "wasm"))]
mod split {
    //! The split build: the entry points, and a ready flag per part.
    use std::cell::RefCell;
    use std::future::Future;
    use std::pin::Pin;

    use futures::FutureExt as _;
    use leptos::prelude::*;
    use leptos::wasm_split::SplitLoaderError;

    use std::rc::Rc;

    use bridge_protocol::api::SessionDetail;
    use bridge_transport::Payload;
    use serde_json::Value;

    use super::Part;
    use crate::diff::DiffLine;
    use crate::markdown::MdNode;
    use crate::net::{StreamEvent, Subscription};
    use crate::state::{Session, Source};

    #[leptos::wasm_split::wasm_split(markdown, wasm_split_path = ::leptos::wasm_split, preload(preload_md_blocks), fallible)]
    fn md_blocks(text: String) -> Result<Vec<String>, SplitLoaderError> {
        Ok(crate::markdown::split_blocks(&text)
            .into_iter()
            .map(str::to_string)
            .collect())
    }

    #[leptos::wasm_split::wasm_split(markdown, wasm_split_path = ::leptos::wasm_split, preload(preload_md_parse), fallible)]
    fn md_parse(block: String) -> Result<Vec<MdNode>, SplitLoaderError> {
        Ok(crate::markdown::parse(&block))
    }

    #[leptos::wasm_split::wasm_split(markdown, wasm_split_path = ::leptos::wasm_split, preload(preload_md_cut), fallible)]
    fn md_cut(src: String) -> Result<Option<(usize, Vec<MdNode>)>, SplitLoaderError> {
        Ok(crate::markdown::paragraph_cut(&src))
    }

    #[leptos::wasm_split::wasm_split(diff, wasm_split_path = ::leptos::wasm_split, preload(preload_diff), fallible)]
    fn diff(old: String, new: String, context: usize) -> Result<Vec<DiffLine>, SplitLoaderError> {
        Ok(crate::diff::diff_lines(&old, &new, context))
    }

    /// Decodes and applies frames to the open session's model (`Session::apply_from`): the typed
    /// decoder (bridge-protocol's serde code) and the transcript model's apply live in the session
    /// part, so the session list never loads them.
    #[leptos::wasm_split::wasm_split(session, wasm_split_path = ::leptos::wasm_split, preload(preload_apply), fallible)]
    fn apply(session: &mut Session, frames: &[(Source, &Payload)]) -> Result<(), SplitLoaderError> {
        for (source, frame) in frames {
            session.apply_text(source.clone(), frame.text());
        }
        Ok(())
    }

    /// Connects to a session's event stream (`net::subscribe`): bridge-transport's live connection
    /// (SSE/WebSocket, the outbox) is only needed once a session is open.
    #[leptos::wasm_split::wasm_split(live, wasm_split_path = ::leptos::wasm_split, preload(preload_subscribe), fallible)]
    fn subscribe(
        id: String,
        from: u64,
        sink: Rc<dyn Fn(StreamEvent)>,
    ) -> Result<Rc<Subscription>, SplitLoaderError> {
        Ok(crate::net::subscribe(&id, from, sink))
    }

    /// Seeds the open session from a session object given as JSON (`Session::set_summary`: its
    /// `SessionDetail` decoder is bridge-protocol's serde code).
    #[leptos::wasm_split::wasm_split(session, wasm_split_path = ::leptos::wasm_split, preload(preload_summary), fallible)]
    fn summary(session: &mut Session, summary: &Value) -> Result<(), SplitLoaderError> {
        session.set_summary(summary);
        Ok(())
    }

    /// Decodes the session detail (`GET /v1/code/sessions/{id}`) that says where the stream
    /// starts: in the live part, which connects right after it.
    #[leptos::wasm_split::wasm_split(live, wasm_split_path = ::leptos::wasm_split, preload(preload_detail), fallible)]
    fn detail(raw: &Value) -> Result<Option<SessionDetail>, SplitLoaderError> {
        Ok(super::decode_detail(raw))
    }

    struct Flag {
        ready: ArcRwSignal<bool>,
        loading: bool,
        /// Run once the part is in (in the order they were asked for).
        then: Vec<Box<dyn FnOnce()>>,
    }

    thread_local! {
        static FLAGS: RefCell<Vec<(Part, Flag)>> = const { RefCell::new(Vec::new()) };
    }

    /// The part's flag (created on first use; reference-counted, so no component owns it).
    fn flag<T>(part: Part, f: impl FnOnce(&mut Flag) -> T) -> T {
        FLAGS.with_borrow_mut(|flags| {
            if let Some((_, fl)) = flags.iter_mut().find(|(p, _)| *p == part) {
                return f(fl);
            }
            let ready = ArcRwSignal::new(false);
            flags.push((
                part,
                Flag {
                    ready,
                    loading: false,
                    then: Vec::new(),
                },
            ));
            f(&mut flags.last_mut().expect("just pushed").1)
        })
    }

    /// Whether `part` is in (read `tracked` or not); starts loading it when it is not.
    pub fn is_in(part: Part, tracked: bool) -> bool {
        let ready = flag(part, |f| f.ready.clone());
        let is_in = if tracked {
            ready.get()
        } else {
            ready.get_untracked()
        };
        if !is_in {
            prefetch(part);
        }
        is_in
    }

    pub fn when_loaded(part: Part, f: impl FnOnce() + 'static) {
        if is_in(part, false) {
            return f();
        }
        flag(part, |fl| fl.then.push(Box::new(f)));
    }

    /// Loads a part's chunk: what an entry point's `preload(..)` names.
    pub type Preload = fn() -> Pin<Box<dyn Future<Output = Result<(), SplitLoaderError>>>>;

    thread_local! {
        /// The entry points that live beside their views (the dialogs, the settings panel, the
        /// session view) say here how their part loads ([`super::register`]).
        static PRELOADS: RefCell<Vec<(Part, Preload)>> = const { RefCell::new(Vec::new()) };
    }

    pub fn register(part: Part, preload: Preload) {
        PRELOADS.with_borrow_mut(|p| p.push((part, preload)));
    }

    /// What loads `part`: the entry points of this file, then those registered for it.
    fn preloads(part: Part) -> Vec<Preload> {
        let mut steps: Vec<Preload> = match part {
            Part::Markdown => vec![
                || Box::pin(preload_md_blocks()),
                || Box::pin(preload_md_parse()),
                || Box::pin(preload_md_cut()),
            ],
            Part::Diff => vec![|| Box::pin(preload_diff())],
            Part::Live => vec![|| Box::pin(preload_subscribe()), || {
                Box::pin(preload_detail())
            }],
            Part::Session => vec![|| Box::pin(preload_apply()), || Box::pin(preload_summary())],
            Part::Dialogs | Part::Settings | Part::Embed => Vec::new(),
        };
        PRELOADS.with_borrow(|p| {
            steps.extend(p.iter().filter(|(q, _)| *q == part).map(|(_, f)| *f));
        });
        steps
    }

    thread_local! {
        /// The part [`first`] loads before any other, and the parts asked for meanwhile.
        static FIRST: RefCell<Option<(Part, Vec<Part>)>> = const { RefCell::new(None) };
    }

    pub fn first(part: Part) {
        if flag(part, |f| f.loading || f.ready.get_untracked()) {
            return;
        }
        FIRST.set(Some((part, Vec::new())));
        prefetch(part);
    }

    /// The part [`first`] was waiting for has loaded (or failed to): the parts asked for meanwhile
    /// load now.
    fn release(part: Part) {
        let held = FIRST.with_borrow_mut(|f| match f {
            Some((p, _)) if *p == part => f.take().map(|(_, later)| later),
            _ => None,
        });
        for p in held.into_iter().flatten() {
            prefetch(p);
        }
    }

    pub fn prefetch(part: Part) {
        let held = FIRST.with_borrow_mut(|f| match f {
            Some((first, later)) if *first != part => {
                if !later.contains(&part) {
                    later.push(part);
                }
                true
            }
            _ => false,
        });
        if held {
            return;
        }
        let start = flag(part, |f| !std::mem::replace(&mut f.loading, true));
        if !start {
            return;
        }
        let steps = preloads(part);
        if steps.is_empty() {
            // A view part asked for before its view registered how it loads: not ready (its
            // fallback shows), and asked again once it is.
            flag(part, |f| f.loading = false);
            release(part);
            return;
        }
        leptos::task::spawn_local(async move {
            let mut loaded = Ok(());
            for step in steps {
                loaded = step().await;
                if loaded.is_err() {
                    break;
                }
            }
            match loaded {
                Ok(()) => {
                    let (ready, then) =
                        flag(part, |f| (f.ready.clone(), std::mem::take(&mut f.then)));
                    ready.set(true);
                    for f in then {
                        f();
                    }
                }
                // Offline or a failed fetch (the loader logs why): the fallback stays, and the next
                // view that asks for the part tries again.
                Err(_) => flag(part, |f| f.loading = false),
            }
            release(part);
        });
    }

    /// Runs a loaded entry point at once (its chunk's load future is already complete).
    pub fn now<T>(f: impl std::future::Future<Output = Result<T, SplitLoaderError>>) -> Option<T> {
        f.now_or_never().and_then(Result::ok)
    }

    pub fn md_blocks_now(text: &str) -> Option<Vec<String>> {
        now(md_blocks(text.to_string()))
    }

    pub fn md_parse_now(block: &str) -> Option<Vec<MdNode>> {
        now(md_parse(block.to_string()))
    }

    pub fn md_cut_now(src: &str) -> Option<Option<(usize, Vec<MdNode>)>> {
        now(md_cut(src.to_string()))
    }

    pub fn diff_now(old: &str, new: &str, context: usize) -> Option<Vec<DiffLine>> {
        now(diff(old.to_string(), new.to_string(), context))
    }

    pub fn subscribe_now(
        id: &str,
        from: u64,
        sink: Rc<dyn Fn(StreamEvent)>,
    ) -> Option<Rc<Subscription>> {
        now(subscribe(id.to_string(), from, sink))
    }

    pub fn apply_now(session: &mut Session, frames: &[(Source, &Payload)]) -> bool {
        now(apply(session, frames)).is_some()
    }

    pub fn summary_now(session: &mut Session, value: &Value) -> bool {
        now(summary(session, value)).is_some()
    }

    pub fn detail_now(raw: &Value) -> Option<Option<SessionDetail>> {
        now(detail(raw))
    }
}

/// Whether `part` is loaded; reactive in the split build (a view that reads it re-renders once the
/// chunk is in), and starts loading it when it is not. Always true without the split.
pub fn ready(part: Part) -> bool {
    is_in(part, true)
}

/// Whether `part` is loaded, without tracking (for the store, outside views); starts loading it when
/// it is not. Always true without the split.
pub fn loaded(part: Part) -> bool {
    is_in(part, false)
}

/// Whether `part` is loaded, read `tracked` or not in the split build; starts loading it when it is
/// not. Always true without the split.
fn is_in(part: Part, tracked: bool) -> bool {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    return split::is_in(part, tracked);
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    {
        let _ = (part, tracked);
        true
    }
}

/// Runs `f` once `part` is loaded: at once when it is, else (after starting its load) when it comes
/// in, in the order asked. A failed load keeps `f` waiting for the next attempt.
pub fn when_loaded(part: Part, f: impl FnOnce() + 'static) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    split::when_loaded(part, f);
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    {
        let _ = part;
        f();
    }
}

/// Decodes `frames` from their JSON text and applies them in order to `session`
/// (`Session::apply_text`; the code is in the session part). False, with nothing applied, while
/// that part is not loaded: the caller keeps the frames and applies them once it is
/// ([`when_loaded`]).
pub fn apply_frames(session: &mut Session, frames: &[(Source, &Payload)]) -> bool {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    return split::apply_now(session, frames);
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    {
        for (source, frame) in frames {
            session.apply_text(source.clone(), frame.text());
        }
        true
    }
}

/// Waits until `part` is loaded (starting its load): at once when it is. Pending while a failed load
/// is not tried again ([`when_loaded`]).
pub async fn wait_for(part: Part) {
    let (tx, rx) = futures::channel::oneshot::channel();
    when_loaded(part, move || {
        let _ = tx.send(());
    });
    let _ = rx.await;
}

/// A session object (`GET /v1/code/sessions/{id}`) read as a [`SessionDetail`], or `None` when it
/// is not one.
fn decode_detail(raw: &Value) -> Option<SessionDetail> {
    bridge_protocol::from_value_text::<SessionDetail>(raw).ok()
}

/// The session detail read from `raw` ([`decode_detail`]; the decoder is in the live part, loaded
/// first): `None` when `raw` is not a session object.
pub async fn session_detail(raw: &Value) -> Option<SessionDetail> {
    wait_for(Part::Live).await;
    #[cfg(all(feature = "split", target_family = "wasm"))]
    return split::detail_now(raw).flatten();
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    decode_detail(raw)
}

/// Seeds `session` from a session object given as JSON (`Session::set_summary`; the code is in the
/// session part). False, with nothing done, while that part is not loaded: callers run once it is
/// ([`when_loaded`]).
pub fn set_summary(session: &mut Session, summary: &Value) -> bool {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    return split::summary_now(session, summary);
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    {
        session.set_summary(summary);
        true
    }
}

/// Connects to the session `id`'s event stream after sequence number `from`
/// (`crate::net::subscribe`; the transport's live connection is the live part), or `None` while
/// that part is not loaded.
pub fn subscribe(id: &str, from: u64, sink: Rc<dyn Fn(StreamEvent)>) -> Option<Rc<Subscription>> {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    return split::subscribe_now(id, from, sink);
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    Some(crate::net::subscribe(id, from, sink))
}

/// Starts loading `part` (once; later calls do nothing).
pub fn prefetch(part: Part) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    split::prefetch(part);
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    let _ = part;
}

/// Loads `part` before any other: parts asked for until it is in (or failed to load) wait for it.
/// Used when a page opens on a prompt (the dialogs part first, the session's after). Does nothing
/// when `part` is loading or loaded already, or without the split build.
pub fn first(part: Part) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    split::first(part);
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    let _ = part;
}

/// Starts loading every part: when a prompt arrives, so its dialog never waits on the network.
pub fn prefetch_all() {
    for part in Part::ALL {
        prefetch(part);
    }
}

/// Loads every part once the browser is idle ([`SETTLE_MS`] after the call, then `requestIdleCallback`
/// with a 2 s timeout, or at once where it is missing, as in Safari), so nothing waits for them
/// later. Called when the session list first arrives, so the chunks are not among what the first
/// paint waits for; later calls do nothing.
pub fn prefetch_when_idle() {
    thread_local! {
        static ASKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if !SPLIT || ASKED.replace(true) {
        return;
    }
    use wasm_bindgen::JsCast as _;
    use wasm_bindgen::closure::Closure;
    let Some(window) = web_sys::window() else {
        return;
    };
    // First let the list render and settle (a slow phone needs a moment after the data arrives),
    // then wait for an idle period, so the chunks never compete with the first paint.
    let idle = Closure::once_into_js(move || {
        let Some(window) = web_sys::window() else {
            return;
        };
        let cb = Closure::once_into_js(prefetch_all);
        let func: &js_sys::Function = cb.unchecked_ref();
        let ric = js_sys::Reflect::get(&window, &"requestIdleCallback".into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
        let opts = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&opts, &"timeout".into(), &2000.into());
        let started = ric.is_some_and(|ric| ric.call2(&window, func, &opts).is_ok());
        if !started {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(func, 0);
        }
    });
    let _ = window
        .set_timeout_with_callback_and_timeout_and_arguments_0(idle.unchecked_ref(), SETTLE_MS);
}

/// How long after the session list arrives the idle prefetch starts waiting for an idle period.
const SETTLE_MS: i32 = 1000;

/// The top-level blocks of `text` as owned strings ([`crate::markdown::split_blocks`]), or `None`
/// while the markdown part is not loaded.
pub fn md_blocks(text: &str) -> Option<Vec<String>> {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    return split::md_blocks_now(text);
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    Some(
        crate::markdown::split_blocks(text)
            .into_iter()
            .map(str::to_string)
            .collect(),
    )
}

/// One block parsed ([`crate::markdown::parse`]), or `None` while the markdown part is not loaded.
pub fn md_parse(block: &str) -> Option<Vec<MdNode>> {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    return split::md_parse_now(block);
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    Some(crate::markdown::parse(block))
}

/// Where a growing paragraph can be cut for good, and the nodes before the cut
/// ([`crate::markdown::paragraph_cut`]); `None` while the markdown part is not loaded.
pub fn md_cut(src: &str) -> Option<Option<(usize, Vec<MdNode>)>> {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    return split::md_cut_now(src);
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    Some(crate::markdown::paragraph_cut(src))
}

/// A line diff ([`crate::diff::diff_lines`]), or `None` while the diff part is not loaded.
pub fn diff_lines(old: &str, new: &str, context: usize) -> Option<Vec<DiffLine>> {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    return split::diff_now(old, new, context);
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    Some(crate::diff::diff_lines(old, new, context))
}
