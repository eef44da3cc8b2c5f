//! Reading a session's top-level rows, for the model tests.

use bridge_console::state::{ItemKind, Session};

/// What `pick` takes from each top-level row, in transcript order (rows it gives `None` for are
/// skipped).
pub fn rows<T>(s: &Session, pick: impl FnMut(&ItemKind) -> Option<T>) -> Vec<T> {
    s.order()
        .iter()
        .map(|k| &s.item(k).expect("every key in the order has its row").kind)
        .filter_map(pick)
        .collect()
}
