//! Every Claude Code session on the machine: the CLI's own transcripts
//! (`<config dir>/projects/<encoded cwd>/<session id>.jsonl`, config dir = `--claude-config-dir`, else
//! `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`) listed beside the relay's sessions, opened as history,
//! resumed (`claude --resume <id>`), forked (`--fork-session --resume-session-at <uuid>`) and rewound
//! (`rewind_files`). [`index`] keeps the list cheap, [`parse`] reads lines, [`api`] is the HTTP surface.

pub mod api;
pub mod index;
pub mod parse;

pub use crate::core::record::{CliLink, ForkedFrom};
pub use index::{Index, Transcript};

pub use crate::core::agent::Resume;
pub use crate::core::config::default_config_dir;
