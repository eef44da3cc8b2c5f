//! The permission audit log: one JSON object per line in `<data-dir>/audit.jsonl`, one per decision
//! (who, when, which prompt, the decision, the edited input). Never contains secrets.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

pub struct AuditLog {
    path: Option<PathBuf>,
    file: Mutex<Option<File>>,
}

impl AuditLog {
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            path: Some(path.to_owned()),
            file: Mutex::new(Some(file)),
        })
    }

    /// An audit log that drops records (for unit tests).
    pub fn disabled() -> Self {
        Self {
            path: None,
            file: Mutex::new(None),
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Appends one record and syncs it to disk before returning: a decision is on record before
    /// it can reach the agent. An error means the record may be missing; the caller must not act.
    pub fn record(&self, entry: &Value) -> std::io::Result<()> {
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = guard.as_mut() {
            let mut line = entry.to_string();
            line.push('\n');
            file.write_all(line.as_bytes())
                .and_then(|()| file.flush())
                .and_then(|()| file.sync_data())
                .inspect_err(|e| tracing::error!(error = %e, "cannot write the audit log"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_is_reported() {
        let full = AuditLog::open(Path::new("/dev/full")).unwrap();
        assert!(full.record(&serde_json::json!({"a": 1})).is_err());
        let dir = tempfile::tempdir().unwrap();
        let ok = AuditLog::open(&dir.path().join("a.jsonl")).unwrap();
        ok.record(&serde_json::json!({"a": 1})).unwrap();
        assert!(AuditLog::disabled().record(&serde_json::json!({})).is_ok());
    }
}
