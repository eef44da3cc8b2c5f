//! When the store applies incoming frames: at once (in a microtask, so frames that arrive in the
//! same task are applied together) while frames come slowly, and once per animation frame under
//! load — when the frames applied at once since the last animation frame have taken
//! [`BUDGET_MS`] or numbered [`MAX_AT_ONCE`]. A lone streamed delta reaches the DOM within a
//! millisecond or two instead of waiting up to a frame; a fast stream is still coalesced so each
//! frame renders once.

use crate::net::Incoming;

/// Time the flushes applied at once may take between two animation frames before the rest waits.
pub const BUDGET_MS: f64 = 4.0;
/// How many flushes may be applied at once between two animation frames before the rest waits.
pub const MAX_AT_ONCE: u32 = 4;

/// How a flush is scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// A flush is already scheduled: the frame joins it.
    Joined,
    /// Apply now (the benchmark's naive baseline).
    Now,
    /// Apply in a microtask: nothing is waiting and this frame's budget is not spent.
    Microtask,
    /// Apply on the next animation frame (under load).
    Frame,
}

/// Frames waiting to be applied, and what has been applied at once since the last animation frame.
#[derive(Default)]
pub struct Inbox {
    pub frames: Vec<Incoming>,
    scheduled: bool,
    /// Apply every frame at once instead of coalescing (benchmark baseline).
    pub naive: bool,
    /// Flushes applied at once since the last animation frame, and the time they took (ms).
    at_once: u32,
    spent_ms: f64,
    /// An animation-frame callback that resets `at_once`/`spent_ms` is scheduled.
    pub frame_reset_scheduled: bool,
    /// A flush waits for the session part to load (split build): the frames stay queued.
    waiting_for_part: bool,
}

impl Inbox {
    /// Queues a frame and says how (whether) to schedule the flush.
    pub fn push(&mut self, frame: Incoming) -> Pace {
        self.frames.push(frame);
        if self.naive {
            return Pace::Now;
        }
        if self.scheduled {
            return Pace::Joined;
        }
        self.scheduled = true;
        if self.at_once < MAX_AT_ONCE && self.spent_ms < BUDGET_MS {
            Pace::Microtask
        } else {
            Pace::Frame
        }
    }

    /// A flush found the session part not loaded: the frames stay queued (a scheduled flush stays
    /// scheduled, so new frames join them). True when no flush waits for the part yet.
    pub fn wait_for_part(&mut self) -> bool {
        !std::mem::replace(&mut self.waiting_for_part, true)
    }

    /// Takes the queued frames (a flush starts).
    pub fn take(&mut self) -> Vec<Incoming> {
        self.scheduled = false;
        self.waiting_for_part = false;
        std::mem::take(&mut self.frames)
    }

    /// Counts a flush applied at once that took `ms`. True when the animation-frame reset still
    /// has to be scheduled.
    pub fn spent(&mut self, ms: f64) -> bool {
        self.at_once += 1;
        self.spent_ms += ms;
        !std::mem::replace(&mut self.frame_reset_scheduled, true)
    }

    /// An animation frame ran: the budget starts again.
    pub fn new_frame(&mut self) {
        self.at_once = 0;
        self.spent_ms = 0.0;
        self.frame_reset_scheduled = false;
    }

    /// Drops the queued frames (the session closed). A scheduled flush finds nothing.
    pub fn clear(&mut self) {
        self.frames.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Incoming;
    use crate::state::Source;

    fn frame() -> Incoming {
        Incoming {
            source: Source::Worker,
            seq: None,
            payload: serde_json::json!({"type": "keep_alive"}).into(),
        }
    }

    /// Pushes a frame, takes it as its flush would, and counts the flush as taking `ms`.
    fn flush(inbox: &mut Inbox, ms: f64) -> Pace {
        let pace = inbox.push(frame());
        assert_eq!(inbox.take().len(), 1);
        inbox.spent(ms);
        pace
    }

    #[test]
    fn frames_apply_at_once_until_four_flushes_then_wait_for_the_animation_frame() {
        let mut inbox = Inbox::default();
        for _ in 0..MAX_AT_ONCE {
            assert_eq!(flush(&mut inbox, 0.1), Pace::Microtask);
        }
        assert_eq!(inbox.push(frame()), Pace::Frame);
        // Frames arriving before that flush join it.
        assert_eq!(inbox.push(frame()), Pace::Joined);
        assert_eq!(inbox.take().len(), 2);
        inbox.new_frame();
        assert_eq!(inbox.push(frame()), Pace::Microtask);
    }

    #[test]
    fn frames_wait_for_the_animation_frame_once_the_time_budget_is_spent() {
        let mut inbox = Inbox::default();
        assert_eq!(flush(&mut inbox, BUDGET_MS - 1.0), Pace::Microtask);
        assert_eq!(flush(&mut inbox, 1.5), Pace::Microtask);
        assert_eq!(inbox.push(frame()), Pace::Frame, "4.5 ms spent");
        inbox.take();
        inbox.new_frame();
        assert_eq!(inbox.push(frame()), Pace::Microtask);
    }

    #[test]
    fn the_frame_reset_is_scheduled_once_per_frame_and_the_naive_baseline_applies_now() {
        let mut inbox = Inbox::default();
        inbox.push(frame());
        inbox.take();
        assert!(inbox.spent(1.0), "the first flush schedules the reset");
        assert!(!inbox.spent(1.0), "already scheduled");
        inbox.new_frame();
        assert!(inbox.spent(1.0));
        inbox.naive = true;
        assert_eq!(inbox.push(frame()), Pace::Now);
        assert_eq!(inbox.push(frame()), Pace::Now);
    }
}
