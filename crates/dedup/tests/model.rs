//! `BoundedSet` and `DedupPair` against trivial reference models (a `Vec`).
#![cfg(not(target_arch = "wasm32"))]

use bridge_dedup::{BoundedSet, DedupPair, Insert, Seen};
use proptest::prelude::*;

/// The naive model: a `Vec`, oldest first, linear scans.
struct VecSet {
    items: Vec<u16>,
    capacity: usize,
}

impl VecSet {
    fn insert(&mut self, v: u16) -> Insert<u16> {
        if self.items.contains(&v) {
            return Insert::AlreadyPresent;
        }
        let evicted = if self.items.len() == self.capacity {
            Some(self.items.remove(0))
        } else {
            None
        };
        self.items.push(v);
        Insert::Inserted { evicted }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u16),
    Contains(u16),
    Clear,
}

fn op() -> impl Strategy<Value = Op> {
    // A small id space so that duplicates and evictions are frequent.
    prop_oneof![
        10 => (0u16..40).prop_map(Op::Insert),
        5 => (0u16..40).prop_map(Op::Contains),
        1 => Just(Op::Clear),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn bounded_set_matches_vec_model(capacity in 1usize..12, ops in proptest::collection::vec(op(), 0..300)) {
        let mut real = BoundedSet::with_capacity(capacity);
        let mut model = VecSet { items: Vec::new(), capacity };
        for op in ops {
            match op {
                Op::Insert(v) => prop_assert_eq!(real.insert(v), model.insert(v)),
                Op::Contains(v) => prop_assert_eq!(real.contains(&v), model.items.contains(&v)),
                Op::Clear => { real.clear(); model.items.clear(); }
            }
            prop_assert_eq!(real.len(), model.items.len());
            prop_assert!(real.len() <= capacity);
            prop_assert_eq!(real.iter().copied().collect::<Vec<_>>(), model.items.clone());
        }
    }

    #[test]
    fn dedup_pair_matches_model(
        capacity in 1usize..8,
        ops in proptest::collection::vec((any::<bool>(), 0u16..20), 0..200),
    ) {
        let mut real = DedupPair::with_capacity(capacity);
        let mut sent = VecSet { items: Vec::new(), capacity };
        let mut received = VecSet { items: Vec::new(), capacity };
        for (is_send, id) in ops {
            if is_send {
                prop_assert_eq!(real.record_sent(id), sent.insert(id));
            } else {
                let expected = if received.items.contains(&id) {
                    Seen::Redelivery
                } else if sent.items.contains(&id) {
                    let _ = received.insert(id);
                    Seen::Echo
                } else {
                    let _ = received.insert(id);
                    Seen::Fresh
                };
                prop_assert_eq!(real.observe(id), expected);
            }
        }
    }
}
