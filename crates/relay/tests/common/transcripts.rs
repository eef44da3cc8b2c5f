//! The Claude Code CLI's own transcripts as tests plant them: a real 2.1.332 transcript and where
//! the CLI keeps it (`<config>/projects/<encoded cwd>/<id>.jsonl`).

use std::path::{Path, PathBuf};

use super::{RelayProc, post_json};
use serde_json::Value;

/// A real transcript: a resumed session that wrote a file (its first prompt "first prompt alpha").
pub const FIXTURE: &str =
    include_str!("../../../../tests/fixtures/transcripts/real-cli-2.1.332-resumed-write.jsonl");
pub const FIXTURE_ID: &str = "27784601-dc95-46a5-9f01-072efd77a9f0";
pub const FIXTURE_CWD: &str = "/tmp/h15x/work";
/// A message uuid in [`FIXTURE`] (the second prompt's).
pub const BETA: &str = "07b34bef-f565-4fc6-bb8f-46bbc8680c14";

/// `<config>/projects/<encoded cwd>/<id>.jsonl` holding `text`.
pub fn put(config: &Path, cwd: &str, id: &str, text: &str) -> PathBuf {
    let dir = config.join("projects").join(cwd.replace(['/', '.'], "-"));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{id}.jsonl"));
    std::fs::write(&p, text).unwrap();
    p
}

/// Under `dir`: `work/` (made) and `claude/` holding [`FIXTURE`] as transcript `id` (its first
/// prompt `prompt`), moved to `work/`: (the config dir, `work/`, its canonical path as text).
pub fn plant(dir: &Path, id: &str, prompt: &str) -> (PathBuf, PathBuf, String) {
    let config = dir.join("claude");
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let work_s = work.canonicalize().unwrap().display().to_string();
    let text = FIXTURE
        .replace(FIXTURE_CWD, &work_s)
        .replace(FIXTURE_ID, id)
        .replace("first prompt alpha", prompt);
    put(&config, &work_s, id, &text);
    (config, work, work_s)
}

/// `POST /v1/code/cli-sessions/{id}/{action}` (`resume`, `fork`, `rewind`) with `body`.
pub async fn cli_action(
    relay: &RelayProc,
    id: &str,
    action: &str,
    token: &str,
    body: Value,
) -> reqwest::Response {
    post_json(
        relay,
        &format!("/v1/code/cli-sessions/{id}/{action}"),
        token,
        body,
    )
    .await
}

/// `GET /v1/code/cli-sessions/{id}` with `token`: the response, whatever its status.
pub async fn cli_session(relay: &RelayProc, id: &str, token: &str) -> reqwest::Response {
    relay
        .get(&format!("/v1/code/cli-sessions/{id}"), token)
        .await
}
