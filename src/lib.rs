//! Bridge Console: a Leptos (CSR) web console for live Claude Code sessions.
//!
//! * [`state`] — the pure transcript model (`Session::apply`), tested natively;
//! * [`markdown`], [`diff`], [`format`], [`virtual_window`] — pure helpers for rendering;
//! * [`net`] — the only module that does network I/O;
//! * [`store`] — the reactive store the components read through context;
//! * [`unsent`] — prompts not yet accepted by the relay, kept across reloads;
//! * [`embed`] — the console inside another page or a webview: URL switches, the host messages;
//! * [`pwa`] — the installed app: service worker, Web Push on this device, notifications;
//! * [`components`] — one component per file; [`App`] is the root.

pub mod app;
pub mod boot;
pub mod components;
pub mod diff;
pub mod dom;
pub mod embed;
pub mod format;
pub mod lazy;
pub mod markdown;
pub mod nav;
pub mod net;
pub mod pwa;
pub mod state;
pub mod store;
#[cfg(test)]
mod test_support;
pub mod unsent;
pub mod virtual_window;

pub use app::App;
