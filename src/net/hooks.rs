//! `GET`/`PUT /v1/hooks/settings`: whether the permission prompts of sessions running in a
//! terminal are held for an answer here (the controller's switch in the Notifications panel).

pub use bridge_protocol::api::HookSettings;

use super::{NetError, request_json};

fn decode(v: serde_json::Value) -> Result<HookSettings, NetError> {
    serde_json::from_value(v).map_err(|e| NetError::Decode(e.to_string()))
}

pub async fn settings() -> Result<HookSettings, NetError> {
    decode(request_json("GET", "/v1/hooks/settings", None).await?)
}

pub async fn set_settings(s: &HookSettings) -> Result<HookSettings, NetError> {
    let body = serde_json::to_value(s).map_err(|e| NetError::Decode(e.to_string()))?;
    decode(request_json("PUT", "/v1/hooks/settings", Some(&body)).await?)
}
