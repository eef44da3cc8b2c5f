//! The core: sessions (their log, state, pending prompts, fan-out), the store, frames, agents, auth and config. It names no edge, feature or cluster (nor HTTP: it fails with `error::Error`, which the edge answers with a status); what plugs in from above it holds in `plugs::Plugs`, and sessions report what a person should be told of through `notice`.

pub mod agent;
pub mod audit;
pub mod auth;
pub mod config;
pub mod error;
pub mod follow;
pub mod frames;
pub mod limits;
pub mod notice;
pub mod plugs;
pub mod proto;
pub mod record;
pub mod redact;
pub mod relay;
pub mod seal;
pub mod session;
pub mod store;
pub mod util;
pub mod validate;
pub mod worktree;
