//! Processes a test started or an agent left behind: whether they run, their pids.

use std::path::Path;
use std::time::Duration;

/// Whether `pid` runs (a zombie waiting for its (new) parent to reap it counts as gone).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| Some(s[s.rfind(')')? + 2..].starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

/// The pid a process wrote to `path` (waits up to 10 s for it).
pub async fn read_pid(path: &Path) -> u32 {
    for _ in 0..200 {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} was never written", path.display());
}

/// Whether `pid` is gone within `secs` seconds.
pub async fn gone_within(pid: u32, secs: u64) -> bool {
    for _ in 0..secs * 20 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}
