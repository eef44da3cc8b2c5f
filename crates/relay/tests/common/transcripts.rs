//! The Claude Code CLI's own transcripts as tests plant them: a real 2.1.332 transcript and where
//! the CLI keeps it (`<config>/projects/<encoded cwd>/<id>.jsonl`).

use std::path::{Path, PathBuf};

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
