//! The integration tests of this crate, one binary (one link): each file is a module.

mod agent;
mod common;
mod conformance;
mod protocol;
mod scenarios;
