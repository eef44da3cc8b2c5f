//! What plugs into the relay from above: features the core holds for their handlers without
//! naming them (scale-out's `Cluster`, the terminal sessions' `Terminals`). One value per type,
//! set once; each feature reads its own through a `Feature::of(&relay)` of its own.

use std::any::Any;
use std::sync::{Arc, RwLock};

#[derive(Default)]
pub struct Plugs(RwLock<Vec<Arc<dyn Any + Send + Sync>>>);

impl Plugs {
    /// Plugs `value` in; `false` (and nothing changed) when one of its type already is.
    pub fn set<T: Any + Send + Sync>(&self, value: Arc<T>) -> bool {
        let mut all = self.0.write().unwrap_or_else(|p| p.into_inner());
        if all.iter().any(|v| v.is::<T>()) {
            return false;
        }
        all.push(value);
        true
    }

    /// The value of type `T`, if one is plugged in.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let all = self.0.read().unwrap_or_else(|p| p.into_inner());
        all.iter().find_map(|v| v.clone().downcast::<T>().ok())
    }

    /// The value of type `T`, plugged in by `make` on first use.
    pub fn get_or_init<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        if let Some(v) = self.get::<T>() {
            return v;
        }
        let mut all = self.0.write().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = all.iter().find_map(|v| v.clone().downcast::<T>().ok()) {
            return v;
        }
        let v = Arc::new(make());
        all.push(v.clone());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_per_type() {
        let p = Plugs::default();
        assert!(p.get::<u32>().is_none());
        assert!(p.set(Arc::new(7u32)));
        assert!(!p.set(Arc::new(8u32)), "set once");
        assert_eq!(*p.get::<u32>().unwrap(), 7);
        assert_eq!(*p.get_or_init(|| String::from("a")), "a");
        assert_eq!(*p.get_or_init(|| String::from("b")), "a", "made once");
        assert_eq!(*p.get::<u32>().unwrap(), 7);
    }
}
