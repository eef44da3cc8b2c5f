//! Reconnect backoff: exponential with jitter, `Retry-After` honoured and
//! clamped, reset only after a healthy period, give-up after a long time
//! without a healthy connection. Time and randomness are arguments.

/// Reconnect policy knobs (defaults per issue 4).
#[derive(Debug, Clone, PartialEq)]
pub struct BackoffConfig {
    /// First delay (1 s).
    pub base_ms: u64,
    /// Largest computed delay (30 s).
    pub max_ms: u64,
    /// Fraction of the delay that jitter may take away: the delay is drawn
    /// from `(d·(1−jitter), d]` (0.5).
    pub jitter: f64,
    /// The most a server's `Retry-After` may delay a reconnect (60 s): a
    /// larger hint is clamped, a hostile one cannot park the client.
    pub max_retry_after_ms: u64,
    /// How long a connection must stay up to count as healthy and reset the
    /// attempt count (10 s): a server that accepts and drops at once keeps
    /// backing off.
    pub healthy_after_ms: u64,
    /// Give up after this long without a healthy connection (10 min).
    pub give_up_after_ms: u64,
}

impl Default for BackoffConfig {
    fn default() -> Self {
        Self {
            base_ms: 1_000,
            max_ms: 30_000,
            jitter: 0.5,
            max_retry_after_ms: 60_000,
            healthy_after_ms: 10_000,
            give_up_after_ms: 10 * 60_000,
        }
    }
}

/// What to do after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Reconnect after `delay_ms`; this is attempt number `attempt` (1-based)
    /// since the last healthy connection.
    After {
        /// Milliseconds to wait.
        delay_ms: u64,
        /// 1-based attempt number.
        attempt: u32,
    },
    /// No healthy connection for `give_up_after_ms`: stop.
    GiveUp,
}

/// The backoff state machine.
#[derive(Debug, Clone)]
pub struct Backoff {
    config: BackoffConfig,
    attempt: u32,
    connected_at: Option<u64>,
    failing_since: Option<u64>,
}

impl Backoff {
    /// A fresh state (no attempts yet).
    pub fn new(config: BackoffConfig) -> Self {
        Self {
            config,
            attempt: 0,
            connected_at: None,
            failing_since: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &BackoffConfig {
        &self.config
    }

    /// Failures since the last healthy connection.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// A connection was established at `now` (headers received / socket
    /// open). It only resets the count once it has lasted `healthy_after_ms`.
    pub fn on_connected(&mut self, now: u64) {
        self.connected_at = Some(now);
    }

    /// `true` if the current connection (if any) has been up long enough to
    /// count as healthy at `now`.
    pub fn is_healthy(&self, now: u64) -> bool {
        self.connected_at
            .is_some_and(|at| now.saturating_sub(at) >= self.config.healthy_after_ms)
    }

    /// The connection failed (or could not be made) at `now`. `retry_after_ms`
    /// is the server's hint, `rand` a uniform number in `[0, 1)`.
    pub fn on_failure(&mut self, now: u64, retry_after_ms: Option<u64>, rand: f64) -> Retry {
        if self.is_healthy(now) {
            self.attempt = 0;
            self.failing_since = None;
        }
        self.connected_at = None;
        let since = *self.failing_since.get_or_insert(now);
        if now.saturating_sub(since) >= self.config.give_up_after_ms {
            return Retry::GiveUp;
        }
        self.attempt = self.attempt.saturating_add(1);
        let exp = self
            .config
            .base_ms
            .saturating_mul(1u64 << (self.attempt - 1).min(32))
            .min(self.config.max_ms);
        let rand = rand.clamp(0.0, 1.0);
        let jitter = self.config.jitter.clamp(0.0, 1.0);
        let mut delay = exp - (exp as f64 * jitter * rand) as u64;
        if let Some(hint) = retry_after_ms {
            delay = delay.max(hint.min(self.config.max_retry_after_ms));
        }
        Retry::After {
            delay_ms: delay,
            attempt: self.attempt,
        }
    }
}

/// Parses a `Retry-After` header value: delta-seconds, or an HTTP date
/// (IMF-fixdate, e.g. `Wed, 21 Oct 2015 07:28:00 GMT`) compared with
/// `now_unix_ms`. Returns milliseconds to wait (0 for a date in the past).
pub fn parse_retry_after(value: &str, now_unix_ms: u64) -> Option<u64> {
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return v.parse::<u64>().ok().map(|s| s.saturating_mul(1000));
    }
    let at = parse_imf_fixdate(v)?;
    Some(at.saturating_sub(now_unix_ms))
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` → Unix milliseconds.
fn parse_imf_fixdate(s: &str) -> Option<u64> {
    let mut parts = s.split_whitespace();
    let _weekday = parts.next()?;
    let day: u64 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':');
    let h: u64 = hms.next()?.parse().ok()?;
    let m: u64 = hms.next()?.parse().ok()?;
    let sec: u64 = hms.next()?.parse().ok()?;
    if parts.next()? != "GMT" || day == 0 || day > 31 || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    // days from civil (Howard Hinnant)
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + m * 60 + sec;
    Some(secs * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    fn delays(b: &mut Backoff, now: u64, n: usize, rand: f64) -> Vec<u64> {
        (0..n)
            .map(|_| match b.on_failure(now, None, rand) {
                Retry::After { delay_ms, .. } => delay_ms,
                Retry::GiveUp => panic!("gave up"),
            })
            .collect()
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn doubles_from_one_second_to_thirty() {
        let mut b = Backoff::new(BackoffConfig::default());
        assert_eq!(
            delays(&mut b, 0, 8, 0.0),
            vec![1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]
        );
        assert_eq!(b.attempt(), 8);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn jitter_takes_at_most_half() {
        let mut b = Backoff::new(BackoffConfig::default());
        assert_eq!(delays(&mut b, 0, 3, 0.999_999), vec![501, 1_001, 2_001]);
        let mut b = Backoff::new(BackoffConfig::default());
        assert_eq!(delays(&mut b, 0, 2, 0.5), vec![750, 1_500]);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn retry_after_is_honoured_and_clamped() {
        let mut b = Backoff::new(BackoffConfig::default());
        assert_eq!(
            b.on_failure(0, Some(5_000), 0.0),
            Retry::After {
                delay_ms: 5_000,
                attempt: 1
            }
        );
        // a small hint never shortens the backoff
        assert_eq!(
            b.on_failure(0, Some(10), 0.0),
            Retry::After {
                delay_ms: 2_000,
                attempt: 2
            }
        );
        // a huge hint is clamped to max_retry_after_ms
        assert_eq!(
            b.on_failure(0, Some(3_600_000), 0.0),
            Retry::After {
                delay_ms: 60_000,
                attempt: 3
            }
        );
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn resets_only_after_a_healthy_period() {
        let mut b = Backoff::new(BackoffConfig::default());
        let _ = delays(&mut b, 0, 3, 0.0);
        // connected, but dropped after 2 s: not healthy, keeps growing
        b.on_connected(10_000);
        assert_eq!(
            b.on_failure(12_000, None, 0.0),
            Retry::After {
                delay_ms: 8_000,
                attempt: 4
            }
        );
        // connected and stayed up 10 s: back to 1 s
        b.on_connected(20_000);
        assert!(!b.is_healthy(29_999));
        assert!(b.is_healthy(30_000));
        assert_eq!(
            b.on_failure(30_000, None, 0.0),
            Retry::After {
                delay_ms: 1_000,
                attempt: 1
            }
        );
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn gives_up_after_ten_minutes_without_a_healthy_connection() {
        let mut b = Backoff::new(BackoffConfig::default());
        let mut now = 1_000;
        let mut attempts = 0;
        while let Retry::After { delay_ms, .. } = b.on_failure(now, None, 0.0) {
            attempts += 1;
            // short-lived connections in between do not count as healthy
            b.on_connected(now + delay_ms);
            now += delay_ms + 1_000;
        }
        assert!(now - 1_000 >= 600_000, "gave up too early at {now}");
        assert!(now - 1_000 < 600_000 + 32_000, "gave up too late at {now}");
        assert!(
            attempts > 5,
            "the SDK gives up after 5; we keep going: {attempts}"
        );
        // a healthy connection afterwards starts a new budget
        let mut b2 = b.clone();
        b2.on_connected(now);
        assert!(matches!(
            b2.on_failure(now + 10_000, None, 0.0),
            Retry::After { attempt: 1, .. }
        ));
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn retry_after_header_forms() {
        assert_eq!(parse_retry_after("2", 0), Some(2_000));
        assert_eq!(parse_retry_after(" 0 ", 0), Some(0));
        assert_eq!(parse_retry_after("-1", 0), None);
        assert_eq!(parse_retry_after("soon", 0), None);
        // 1994-11-06T08:49:37Z = 784111777 s
        let at = 784_111_777_000;
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", at - 3_000),
            Some(3_000)
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", at + 5),
            Some(0)
        );
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:37 UTC", 0), None);
    }
}
