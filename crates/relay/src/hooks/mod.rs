//! Terminal sessions through Claude Code's own HTTP hooks (issue 28): `bridge-relay hooks
//! install | uninstall | status` writes the hooks into Claude Code's settings ([`settings`],
//! [`cli`]); the relay serves them ([`api`]) and follows each terminal session live ([`live`]).

pub mod api;
pub mod live;
