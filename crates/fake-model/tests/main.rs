//! The integration tests of this crate, one binary (one link): each file is a module.

mod common;
mod e2e_scenario;
mod real_cli;
mod server;
