//! Terminal sessions through Claude Code's own HTTP hooks (issue 28): `bridge-relay hooks
//! install | uninstall | status` writes the hooks into Claude Code's settings ([`install`]); the
//! relay serves them ([`api`]) and follows each terminal session live ([`live`]).

pub mod api;
pub mod install;
pub mod live;
