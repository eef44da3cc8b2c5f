//! Bridge Console: a Leptos (CSR) web console for live Claude Code sessions.
//!
//! `state` is the pure transcript model (tested natively); `markdown` and `diff` are pure renderers'
//! helpers; `net` is the only module that does network I/O; `store` is the reactive wrapper the
//! components read through context; `components` holds one component per file.

pub mod state;
pub mod diff;
pub mod markdown;
pub mod dom;
pub mod net;
pub mod store;
pub mod virtual_window;
pub mod format;
