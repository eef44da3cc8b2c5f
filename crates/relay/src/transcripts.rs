//! Every Claude Code session on the machine: the CLI's own transcripts
//! (`<config dir>/projects/<encoded cwd>/<session id>.jsonl`, config dir = `--claude-config-dir`, else
//! `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`) listed beside the relay's sessions, opened as history,
//! resumed (`claude --resume <id>`), forked (`--fork-session --resume-session-at <uuid>`) and rewound
//! (`rewind_files`). [`index`] keeps the list cheap, [`parse`] reads lines, [`api`] is the HTTP surface.

pub mod api;
pub mod index;
pub mod parse;

pub use crate::record::{CliLink, ForkedFrom};
pub use index::{Index, Transcript};

/// What a relay session must be started with to continue a CLI session (the agent's arguments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    pub session_id: String,
    /// `--fork-session`: a new session id, the original transcript stays as it is.
    pub fork: bool,
    /// `--resume-session-at`: keep the conversation up to and including this message.
    pub at: Option<String>,
}

impl Resume {
    /// The CLI's flags for it.
    pub fn flags(&self) -> Vec<String> {
        let mut v = vec!["--resume".to_owned(), self.session_id.clone()];
        if self.fork {
            v.push("--fork-session".to_owned());
        }
        if let Some(at) = &self.at {
            v.extend(["--resume-session-at".to_owned(), at.clone()]);
        }
        v
    }
}

/// The default config dir: `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`.
pub fn default_config_dir() -> std::path::PathBuf {
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return d.into();
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/".into());
    std::path::Path::new(&home).join(".claude")
}
