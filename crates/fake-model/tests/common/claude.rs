//! The real Claude Code CLI the real-CLI tests run. Shared: the relay's tests include this file
//! too (`crates/relay/tests/common/mod.rs`), so that both pin the same version.

use std::path::PathBuf;

/// The Claude Code CLI version the real-CLI tests run (scripts/install-claude.sh installs it).
pub const PINNED: &str = "2.1.332";

/// The real CLI: `CLAUDE_BIN`, else the pinned version in the tool cache; `None` when missing.
pub fn claude_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CLAUDE_BIN") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let cache = std::env::var_os("BRIDGE_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/bridge-console"))
        })?;
    let p = cache.join("claude").join(PINNED).join("package/claude");
    p.is_file().then_some(p)
}

/// [`claude_bin`]; when it is missing, says on stderr that the test is skipped and why.
pub fn claude_or_skip() -> Option<PathBuf> {
    let bin = claude_bin();
    if bin.is_none() {
        eprintln!(
            "SKIPPED: the real Claude Code CLI {PINNED} is not installed; run scripts/install-claude.sh \
             (or set CLAUDE_BIN) to run this test"
        );
    }
    bin
}
