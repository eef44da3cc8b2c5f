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

    pub fn record(&self, entry: &Value) {
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = guard.as_mut() {
            let mut line = entry.to_string();
            line.push('\n');
            if let Err(e) = file.write_all(line.as_bytes()).and_then(|()| file.flush()) {
                tracing::error!(error = %e, "cannot write the audit log");
            }
        }
    }
}
