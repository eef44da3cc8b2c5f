//! The integration tests of this crate, one binary (one link): each file is a module.

mod common;
mod agent;
mod conformance;
mod protocol;
