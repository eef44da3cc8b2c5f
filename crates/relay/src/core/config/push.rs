//! The push flags (`--push-contact`, `--push-endpoint-allow`, `--push-min-turn-secs`), checked.

use std::time::Duration;

use super::endpoint::AllowedPrefix;
use crate::core::util::hostname;

/// Default `--push-min-turn-secs`.
pub const DEFAULT_MIN_TURN_SECS: u64 = 30;

/// The push flags, checked.
#[derive(Debug, Clone)]
pub struct PushConfig {
    /// The VAPID `sub`: a `mailto:` or `https:` URI push services can reach the operator at.
    pub contact: String,
    pub endpoint_allow: Vec<AllowedPrefix>,
    /// Shorter turns send no `turn_done`.
    pub min_turn: Duration,
}

impl PushConfig {
    /// From `--push-contact`, `--push-endpoint-allow` and `--push-min-turn-secs`.
    pub fn new(
        contact: Option<String>,
        endpoint_allow: &[String],
        min_turn_secs: u64,
    ) -> Result<Self, String> {
        let contact = match contact {
            Some(c) => {
                let c = c.trim().to_owned();
                let ok = c.strip_prefix("mailto:").is_some_and(|a| a.contains('@'))
                    || c.strip_prefix("https://").is_some_and(|h| !h.is_empty());
                if !ok {
                    return Err(format!(
                        "--push-contact {c:?}: expected mailto:you@example.com or an https:// URL (push services use it to reach the operator)"
                    ));
                }
                c
            }
            None => format!("mailto:bridge-relay@{}", hostname()),
        };
        let endpoint_allow = endpoint_allow
            .iter()
            .map(|p| AllowedPrefix::parse(p))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            contact,
            endpoint_allow,
            min_turn: Duration::from_secs(min_turn_secs),
        })
    }
}

impl Default for PushConfig {
    fn default() -> Self {
        Self::new(None, &[], DEFAULT_MIN_TURN_SECS).expect("the defaults are valid")
    }
}
