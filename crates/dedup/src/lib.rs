//! Bounded FIFO id sets for dropping echoes and redeliveries.
//!
//! [`BoundedSet`] is the seed's `BoundedUUIDSet`: a set with a fixed capacity
//! that forgets its oldest member when a new one would not fit. Insert and
//! lookup are O(1) (a `VecDeque` keeps the order, a `HashSet` answers
//! membership). [`BoundedSet::insert`] tells what it evicted, so a caller can
//! see exactly what it stopped remembering.
//!
//! [`DedupPair`] is the pair of sets a session client keeps: the ids it posted
//! (so the server's echo of its own message is recognised) and the ids it
//! received (so a redelivery after a reconnect is recognised), with prefill
//! from history when a client resumes.
//!
//! ```
//! use bridge_dedup::{BoundedSet, Insert};
//!
//! let mut set = BoundedSet::with_capacity(2);
//! assert_eq!(set.insert("a"), Insert::Inserted { evicted: None });
//! assert_eq!(set.insert("b"), Insert::Inserted { evicted: None });
//! assert_eq!(set.insert("a"), Insert::AlreadyPresent);
//! assert_eq!(set.insert("c"), Insert::Inserted { evicted: Some("a") });
//! assert!(!set.contains("a"));
//! ```

use std::borrow::Borrow;
use std::collections::{HashSet, VecDeque};
use std::hash::Hash;

/// The capacity the seed uses for each of a client's two id sets.
pub const DEFAULT_CAPACITY: usize = 2_000;

/// What [`BoundedSet::insert`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Insert<T> {
    /// The value was not present and is now the newest member. `evicted` is
    /// the oldest member, removed to make room (only when the set was full).
    Inserted {
        /// The member that was forgotten to make room, if any.
        evicted: Option<T>,
    },
    /// The value was already a member; nothing changed (its position in the
    /// eviction order is not refreshed: the set is FIFO, not LRU).
    AlreadyPresent,
}

impl<T> Insert<T> {
    /// `true` when the value was new — the same answer as `HashSet::insert`.
    pub fn is_inserted(&self) -> bool {
        matches!(self, Insert::Inserted { .. })
    }

    /// The evicted member, if this insert evicted one.
    pub fn evicted(self) -> Option<T> {
        match self {
            Insert::Inserted { evicted } => evicted,
            Insert::AlreadyPresent => None,
        }
    }
}

/// A set with a fixed capacity that evicts its oldest member first.
#[derive(Debug, Clone)]
pub struct BoundedSet<T> {
    order: VecDeque<T>,
    members: HashSet<T>,
    capacity: usize,
}

impl<T: Eq + Hash + Clone> Default for BoundedSet<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Eq + Hash + Clone> BoundedSet<T> {
    /// An empty set holding at most [`DEFAULT_CAPACITY`] members.
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY)
    }

    /// An empty set holding at most `capacity` members.
    ///
    /// # Panics
    /// If `capacity` is 0: a set that can remember nothing would silently
    /// let every duplicate through.
    pub fn with_capacity(capacity: usize) -> Self {
        assert!(capacity > 0, "BoundedSet capacity must be at least 1");
        Self {
            order: VecDeque::with_capacity(capacity),
            members: HashSet::with_capacity(capacity),
            capacity,
        }
    }

    /// The most members this set keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many members the set holds now.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// `true` if the set holds no member.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// `true` if `value` is a member.
    pub fn contains<Q>(&self, value: &Q) -> bool
    where
        T: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.members.contains(value)
    }

    /// Adds `value` as the newest member, evicting the oldest one when full.
    pub fn insert(&mut self, value: T) -> Insert<T> {
        if self.members.contains(&value) {
            return Insert::AlreadyPresent;
        }
        let evicted = if self.order.len() == self.capacity {
            let oldest = self
                .order
                .pop_front()
                .expect("a full set with capacity >= 1 has an oldest member");
            self.members.remove(&oldest);
            Some(oldest)
        } else {
            None
        };
        self.members.insert(value.clone());
        self.order.push_back(value);
        Insert::Inserted { evicted }
    }

    /// Removes every member.
    pub fn clear(&mut self) {
        self.order.clear();
        self.members.clear();
    }

    /// The members, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator {
        self.order.iter()
    }

    /// The member that the next insert into a full set would evict.
    pub fn oldest(&self) -> Option<&T> {
        self.order.front()
    }

    /// The member inserted last.
    pub fn newest(&self) -> Option<&T> {
        self.order.back()
    }
}

impl<T: Eq + Hash + Clone> Extend<T> for BoundedSet<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for value in iter {
            let _ = self.insert(value);
        }
    }
}

impl<'a, T: Eq + Hash + Clone> IntoIterator for &'a BoundedSet<T> {
    type Item = &'a T;
    type IntoIter = std::collections::vec_deque::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.order.iter()
    }
}

/// How [`DedupPair::observe`] classified an inbound id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Never seen: deliver it.
    Fresh,
    /// The server's echo of something this client posted: drop it (the
    /// client already shows its own message).
    Echo,
    /// Already received once (a redelivery after a reconnect): drop it.
    Redelivery,
}

/// The two id sets a session client keeps.
///
/// * `sent` — ids this client posted, so their echoes are dropped;
/// * `received` — ids this client delivered, so redeliveries are dropped.
#[derive(Debug, Clone)]
pub struct DedupPair<T> {
    sent: BoundedSet<T>,
    received: BoundedSet<T>,
}

impl<T: Eq + Hash + Clone> Default for DedupPair<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Eq + Hash + Clone> DedupPair<T> {
    /// Two sets of [`DEFAULT_CAPACITY`] each.
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY)
    }

    /// Two sets of `capacity` each.
    ///
    /// # Panics
    /// If `capacity` is 0.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            sent: BoundedSet::with_capacity(capacity),
            received: BoundedSet::with_capacity(capacity),
        }
    }

    /// Records an id this client is posting.
    pub fn record_sent(&mut self, id: T) -> Insert<T> {
        self.sent.insert(id)
    }

    /// `true` if this client posted `id` (and has not forgotten it yet).
    pub fn was_sent<Q>(&self, id: &Q) -> bool
    where
        T: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.sent.contains(id)
    }

    /// `true` if `id` was received (and not forgotten yet).
    pub fn was_received<Q>(&self, id: &Q) -> bool
    where
        T: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.received.contains(id)
    }

    /// Classifies an inbound id and remembers it as received.
    ///
    /// A redelivery is checked first, so the second copy of an echo counts as
    /// a redelivery; the first copy of an echo is an [`Seen::Echo`].
    pub fn observe(&mut self, id: T) -> Seen {
        if self.received.contains(&id) {
            return Seen::Redelivery;
        }
        let echo = self.sent.contains(&id);
        let _ = self.received.insert(id);
        if echo { Seen::Echo } else { Seen::Fresh }
    }

    /// Prefills the received set from history (oldest first), e.g. the ids of
    /// the transcript a resuming client already shows.
    pub fn prefill_received<I: IntoIterator<Item = T>>(&mut self, ids: I) {
        self.received.extend(ids);
    }

    /// Prefills the sent set, e.g. the ids of messages still in an outbox
    /// restored after a reload.
    pub fn prefill_sent<I: IntoIterator<Item = T>>(&mut self, ids: I) {
        self.sent.extend(ids);
    }

    /// The set of posted ids.
    pub fn sent(&self) -> &BoundedSet<T> {
        &self.sent
    }

    /// The set of received ids.
    pub fn received(&self) -> &BoundedSet<T> {
        &self.received
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;
    #[cfg(target_arch = "wasm32")]
    wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

    /// A randomized run against a naive `Vec` model with a fixed-seed generator, so the same check runs
    /// natively and in the browser (the proptest version in tests/model.rs is native-only).
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn matches_a_naive_model_under_a_seeded_random_workload() {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for capacity in [1usize, 2, 7, 64] {
            let mut set = BoundedSet::with_capacity(capacity);
            let mut model: Vec<u64> = Vec::new();
            for _ in 0..5_000 {
                let v = next() % (capacity as u64 * 3);
                let expected = if model.contains(&v) {
                    Insert::AlreadyPresent
                } else {
                    let evicted = (model.len() == capacity).then(|| model.remove(0));
                    model.push(v);
                    Insert::Inserted { evicted }
                };
                assert_eq!(set.insert(v), expected, "capacity {capacity}, value {v}");
                assert_eq!(set.len(), model.len());
                let probe = next() % (capacity as u64 * 3);
                assert_eq!(set.contains(&probe), model.contains(&probe));
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn evicts_oldest_first_and_reports_it() {
        let mut set = BoundedSet::with_capacity(3);
        for i in 0..3 {
            assert_eq!(set.insert(i), Insert::Inserted { evicted: None });
        }
        assert_eq!(set.len(), 3);
        assert_eq!(set.insert(3), Insert::Inserted { evicted: Some(0) });
        assert_eq!(set.insert(4), Insert::Inserted { evicted: Some(1) });
        assert!(!set.contains(&0) && !set.contains(&1));
        assert!(set.contains(&2) && set.contains(&3) && set.contains(&4));
        assert_eq!(set.iter().copied().collect::<Vec<_>>(), vec![2, 3, 4]);
        assert_eq!(set.oldest(), Some(&2));
        assert_eq!(set.newest(), Some(&4));
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn duplicate_insert_changes_nothing_and_does_not_refresh() {
        let mut set = BoundedSet::with_capacity(2);
        let _ = set.insert("a");
        let _ = set.insert("b");
        assert_eq!(set.insert("a"), Insert::AlreadyPresent);
        assert!(!set.insert("a").is_inserted());
        // FIFO: "a" is still the oldest even though it was inserted again.
        assert_eq!(set.insert("c").evicted(), Some("a"));
        assert_eq!(set.len(), 2);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn default_capacity_is_two_thousand_and_lookup_borrows() {
        let mut set: BoundedSet<String> = BoundedSet::new();
        assert_eq!(set.capacity(), 2_000);
        for i in 0..2_500 {
            let _ = set.insert(format!("id-{i}"));
        }
        assert_eq!(set.len(), 2_000);
        assert!(!set.contains("id-499"));
        assert!(set.contains("id-500"));
        assert!(set.contains("id-2499"));
        set.clear();
        assert!(set.is_empty() && !set.contains("id-2499"));
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn capacity_one_keeps_only_the_newest() {
        let mut set = BoundedSet::with_capacity(1);
        let _ = set.insert(1u8);
        assert_eq!(set.insert(2).evicted(), Some(1));
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![&2]);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    #[should_panic(expected = "capacity must be at least 1")]
    fn zero_capacity_is_refused() {
        let _ = BoundedSet::<u8>::with_capacity(0);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn pair_drops_echoes_and_redeliveries() {
        let mut pair: DedupPair<String> = DedupPair::with_capacity(4);
        let _ = pair.record_sent("mine".to_owned());
        assert!(pair.was_sent("mine"));
        assert_eq!(pair.observe("theirs".to_owned()), Seen::Fresh);
        assert_eq!(pair.observe("mine".to_owned()), Seen::Echo);
        assert_eq!(pair.observe("mine".to_owned()), Seen::Redelivery);
        assert_eq!(pair.observe("theirs".to_owned()), Seen::Redelivery);
        assert!(pair.was_received("theirs"));
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn pair_prefill_on_resume_and_forgets_beyond_capacity() {
        let mut pair: DedupPair<u32> = DedupPair::with_capacity(3);
        pair.prefill_received([1, 2, 3, 4]);
        pair.prefill_sent([10]);
        assert_eq!(pair.observe(1), Seen::Fresh, "1 was evicted by the prefill");
        // observing 1 evicted 2
        assert_eq!(pair.observe(2), Seen::Fresh);
        assert_eq!(pair.observe(4), Seen::Redelivery);
        assert_eq!(pair.observe(10), Seen::Echo);
        assert_eq!(pair.sent().len(), 1);
        assert_eq!(pair.received().len(), 3);
    }
}
