//! The models, permission modes and prices the demo agent reports, and the ids and timestamps it mints.

use uuid::Uuid;

/// The version string the demo agent reports (`claude_code_version`).
pub const DEMO_VERSION: &str = "2.1.332-demo";

/// Permission modes the CLI accepts (`manual` is an alias of `default`).
pub const PERMISSION_MODES: &[&str] = &[
    "default",
    "acceptEdits",
    "bypassPermissions",
    "plan",
    "dontAsk",
    "auto",
];

/// Normalizes a permission mode name; `None` if the CLI would reject it.
pub fn normalize_mode(mode: &str) -> Option<&'static str> {
    if mode == "manual" {
        return Some("default");
    }
    PERMISSION_MODES.iter().copied().find(|m| *m == mode)
}

/// A model the demo agent offers in `initialize.models`.
#[derive(Debug, Clone, Copy)]
pub struct ModelDef {
    pub value: &'static str,
    pub resolved: &'static str,
    pub display_name: &'static str,
    pub description: &'static str,
    /// USD per million input / output tokens.
    pub price: (f64, f64),
}

/// The models listed by `initialize` (the first is the default).
pub const MODELS: &[ModelDef] = &[
    ModelDef {
        value: "default",
        resolved: "claude-sonnet-4-5",
        display_name: "Default (recommended)",
        description: "Use the default model (currently Sonnet 4.5) · demo · $3/$15 per Mtok",
        price: (3.0, 15.0),
    },
    ModelDef {
        value: "opus",
        resolved: "claude-opus-4-1",
        display_name: "Opus",
        description: "Opus 4.1 · Most capable for complex work · demo · $15/$75 per Mtok",
        price: (15.0, 75.0),
    },
    ModelDef {
        value: "sonnet",
        resolved: "claude-sonnet-4-5",
        display_name: "Sonnet",
        description: "Sonnet 4.5 · Best for everyday tasks · demo · $3/$15 per Mtok",
        price: (3.0, 15.0),
    },
    ModelDef {
        value: "haiku",
        resolved: "claude-haiku-4-5",
        display_name: "Haiku",
        description: "Haiku 4.5 · Fastest for quick answers · demo · $1/$5 per Mtok",
        price: (1.0, 5.0),
    },
];

/// Resolves an alias (`opus`, `default`, …) to a model id; other names pass through.
pub fn resolve_model(model: Option<&str>) -> String {
    let m = model.filter(|m| !m.is_empty()).unwrap_or("default");
    MODELS
        .iter()
        .find(|d| d.value == m)
        .map(|d| d.resolved.to_owned())
        .unwrap_or_else(|| m.to_owned())
}

/// List price (USD per Mtok in, out) for a model id.
pub fn model_price(model: &str) -> (f64, f64) {
    if let Some(d) = MODELS
        .iter()
        .find(|d| d.resolved == model || d.value == model)
    {
        return d.price;
    }
    if model.contains("opus") {
        (15.0, 75.0)
    } else if model.contains("haiku") {
        (1.0, 5.0)
    } else {
        (3.0, 15.0)
    }
}

/// USD cost of a token count at the model's list price (rounded to 1e-9).
pub fn cost_usd(model: &str, input_tokens: u64, output_tokens: u64) -> f64 {
    let (pi, po) = model_price(model);
    let c = (input_tokens as f64 * pi + output_tokens as f64 * po) / 1_000_000.0;
    (c * 1e9).round() / 1e9
}

pub(super) fn tokens_for(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

pub(super) fn new_uuid() -> String {
    Uuid::new_v4().to_string()
}

pub(super) fn hex_id(len: usize) -> String {
    let mut s = Uuid::new_v4().simple().to_string();
    s.push_str(&Uuid::new_v4().simple().to_string());
    s.truncate(len);
    s
}

pub(super) fn now_iso() -> String {
    let fmt = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    time::OffsetDateTime::now_utc()
        .format(&fmt)
        .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_matches_the_real_capture() {
        // live capture: claude-sonnet-4-5, 24 in / 50 out -> 0.000822
        assert!((cost_usd("claude-sonnet-4-5", 24, 50) - 0.000822).abs() < 1e-12);
        assert!(cost_usd("claude-opus-4-1", 24, 50) > cost_usd("claude-haiku-4-5", 24, 50));
    }

    #[test]
    fn model_aliases_resolve() {
        assert_eq!(resolve_model(None), "claude-sonnet-4-5");
        assert_eq!(resolve_model(Some("opus")), "claude-opus-4-1");
        assert_eq!(resolve_model(Some("my-model")), "my-model");
        assert_eq!(normalize_mode("manual"), Some("default"));
        assert_eq!(normalize_mode("yolo"), None);
    }
}
