//! The integration tests of this crate, one binary (one link): each file is a module.

mod agent_info;
mod cache;
mod changes;
mod chaos;
mod cluster;
mod cluster_cli;
mod cluster_forward;
mod cluster_lifecycle;
mod cluster_load;
mod cluster_push;
mod cluster_trust;
mod common;
mod credentials;
mod first_screen;
mod floors;
mod fuzz_corpus;
mod hardening;
mod limits;
mod push;
mod relay;
mod terminal;
mod terminal_cli;
mod tls;
mod transcript_frames;
mod transcripts;
