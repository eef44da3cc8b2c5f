//! The relay's request handlers: `bridge_relay::app(state)` driven through `tower::ServiceExt::oneshot`
//! on a current-thread runtime, no socket.
//!
//! Each input is up to four requests separated by the byte 0x1E (record separator). A request is text:
//! `METHOD PATH` on the first line, `Name: value` header lines, a blank line, then the body. The
//! relay (memory store, in-memory auth with a known controller token, audit disabled, no push) has
//! one restored session `cse_fuzz` holding a few events, and an agent launcher whose program does
//! not exist (creating a session answers 502 without running anything).
//!
//! Building that relay and its router costs more than most inputs (the auth store's SQLite schema,
//! the route table), so it is built once and kept while inputs leave it as it was. After an input
//! it is rebuilt from scratch when any request may have changed something: a write that was not
//! refused (a method other than GET/HEAD/OPTIONS answered below 400), a 401 or 429 (a failed login
//! is charged to the per-peer rate limit), a `Set-Cookie` (a login), or a change in what the relay
//! shows — every session's summary (state, archived, worktree, last sequence number), every
//! credential and login (without their last-use times), and the streams still open. So each input
//! starts from the same relay. Shared between inputs, by design: the tokio runtime and its clock,
//! the parsed configuration, and the last-use times of the controller token.
//!
//! Properties: no panic; no 5xx except the documented ones (502 the agent could not be started, 503
//! a queue is full / push is not configured); every answer is JSON or a stream the client can read.
//! (The body is `bridge_fuzz::targets::relay_http::input`, shared with the corpus replay in CI.)
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bridge_fuzz::targets::relay_http::input(data));
