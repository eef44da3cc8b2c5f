//! The features, each with its own routes: Web Push, the changes panel, Claude Code's transcripts, TLS, terminal sessions through hooks, the systemd service. Each takes from the core and the edge, and plugs into the relay (`plugs`) when it keeps state.

pub mod changes;
pub mod hooks;
pub mod push;
pub mod service;
pub mod tls;
pub mod transcripts;
