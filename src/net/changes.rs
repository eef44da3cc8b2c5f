//! The relay's changes API: what changed in a session's working directory, and one file's diff
//! (`GET /v1/code/sessions/{id}/changes`, `…/changes/diff?path=`). Read-only; observers may call it.

use super::{NetError, enc, request_json};

/// The shapes, as the relay writes them (bridge-protocol).
pub use bridge_protocol::api::{ChangeList, ChangeSource, ChangeStatus, ChangedFile, FileDiff};

/// The changed files of session `id`.
pub async fn list(id: &str) -> Result<ChangeList, NetError> {
    let v = request_json(
        "GET",
        &format!("/v1/code/sessions/{}/changes", enc(id)),
        None,
    )
    .await?;
    serde_json::from_value(v).map_err(|e| NetError::Decode(e.to_string()))
}

/// The diff of `path` (as listed) in session `id`.
pub async fn diff(id: &str, path: &str) -> Result<FileDiff, NetError> {
    let url = format!(
        "/v1/code/sessions/{}/changes/diff?path={}",
        enc(id),
        enc(path)
    );
    let v = request_json("GET", &url, None).await?;
    serde_json::from_value(v).map_err(|e| NetError::Decode(e.to_string()))
}
