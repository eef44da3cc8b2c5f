//! `bridge-relay hooks install | uninstall | status`: Claude Code's HTTP hooks in its settings file,
//! so that every `claude` started afterwards, in any shell, reports to the relay — no variable to
//! export (the hook credential is a literal header value; the file becomes owner-only).
//!
//! * `install [--settings FILE] [--url URL] [--token-file FILE]`: asks the running relay for a
//!   hook-only credential (`POST /v1/hooks/credentials`, the controller token from `--token-file`
//!   or `BRIDGE_RELAY_TOKEN`), replaces the entries it wrote before (revoking their credential) and
//!   adds one hook group per event. Every other key and hook of the file is kept; the file before
//!   the change is copied to `<file>.bridge-backup`.
//! * `uninstall [--settings FILE] [--url URL] [--token-file FILE]`: removes exactly the entries it
//!   added (a group, event or `hooks` left empty goes too) and revokes their credential (best
//!   effort: a relay that is down keeps it listed until it is revoked in the console).
//! * `status [--settings FILE]`: the entries and whether the relay answers them.
//!
//! Our entries are the `http` hooks whose `url` ends in `/v1/hooks` and that carry an
//! `X-Bridge-Hook` header (the credential's id).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde_json::{Map, Value, json};

/// The events hooked, in the order they are written.
pub const EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PermissionRequest",
    "PostToolUse",
    "Notification",
    "Stop",
    "SessionEnd",
];
/// The hook's own timeout for a permission prompt: the relay holds one for at most
/// [`super::live::MAX_WAIT_SECS`].
pub const PERMISSION_TIMEOUT_SECS: u64 = super::live::MAX_WAIT_SECS + 30;
/// Every other event is answered at once.
pub const EVENT_TIMEOUT_SECS: u64 = 10;
const MARK: &str = "X-Bridge-Hook";

/// What the hooks are written with.
pub struct HookConfig {
    /// The relay's base URL (`http://127.0.0.1:7860`).
    pub url: String,
    pub token: String,
    pub credential_id: String,
}

/// One entry of ours in a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub event: String,
    pub url: String,
    pub credential_id: String,
    pub token: String,
}

fn is_ours(hook: &Value) -> bool {
    hook.get("type").and_then(Value::as_str) == Some("http")
        && hook
            .get("url")
            .and_then(Value::as_str)
            .is_some_and(|u| u.ends_with("/v1/hooks"))
        && hook.pointer(&format!("/headers/{MARK}")).is_some()
}

/// `settings` without our entries, and how many were removed. A group, an event or `hooks` left
/// empty by that is removed; anything else stays exactly as it was.
pub fn uninstall(settings: &Value) -> (Value, usize) {
    let mut out = settings.clone();
    let mut removed = 0;
    let Some(hooks) = out.get_mut("hooks").and_then(Value::as_object_mut) else {
        return (out, 0);
    };
    let events: Vec<String> = hooks.keys().cloned().collect();
    for event in events {
        let Some(groups) = hooks.get_mut(&event).and_then(Value::as_array_mut) else {
            continue;
        };
        let before_groups = groups.len();
        groups.retain_mut(|g| {
            let Some(list) = g.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = list.len();
            list.retain(|h| !is_ours(h));
            removed += before - list.len();
            // A group we emptied goes; one that was empty already stays.
            !(before > 0 && list.is_empty())
        });
        if before_groups > 0 && groups.is_empty() {
            hooks.shift_remove(&event);
        }
    }
    if removed > 0
        && out
            .get("hooks")
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
        && let Some(o) = out.as_object_mut()
    {
        o.shift_remove("hooks");
    }
    (out, removed)
}

/// `settings` (absent: `{}`) with our entries: the earlier ones removed, one group per event added.
pub fn install(settings: Option<&Value>, cfg: &HookConfig) -> Result<Value, String> {
    let base = settings.cloned().unwrap_or_else(|| json!({}));
    if !base.is_object() {
        return Err("the settings file must hold a JSON object".into());
    }
    let (mut out, _) = uninstall(&base);
    let o = out.as_object_mut().expect("checked above");
    let hooks = o.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        return Err("\"hooks\" must be an object of events (e.g. {\"Stop\": [...]})".into());
    };
    let url = format!("{}/v1/hooks", cfg.url.trim_end_matches('/'));
    for event in EVENTS {
        let entry = hooks.entry(*event).or_insert_with(|| json!([]));
        let Some(groups) = entry.as_array_mut() else {
            return Err(format!(
                "\"hooks\".\"{event}\" must be a list of hook groups"
            ));
        };
        let timeout = if *event == "PermissionRequest" {
            PERMISSION_TIMEOUT_SECS
        } else {
            EVENT_TIMEOUT_SECS
        };
        let hook = json!({
            "type": "http",
            "url": url,
            "headers": {"Authorization": format!("Bearer {}", cfg.token), MARK: cfg.credential_id},
            "timeout": timeout,
        });
        groups.push(if matches!(*event, "PermissionRequest" | "PostToolUse") {
            json!({"matcher": "*", "hooks": [hook]})
        } else {
            json!({"hooks": [hook]})
        });
    }
    Ok(out)
}

/// Our entries in `settings`.
pub fn installed(settings: &Value) -> Vec<Installed> {
    let mut out = Vec::new();
    let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for (event, groups) in hooks {
        for g in groups.as_array().into_iter().flatten() {
            for h in g
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if !is_ours(h) {
                    continue;
                }
                let s = |p: &str| h.pointer(p).and_then(Value::as_str).unwrap_or_default();
                out.push(Installed {
                    event: event.clone(),
                    url: s("/url").trim_end_matches("/v1/hooks").to_owned(),
                    credential_id: s(&format!("/headers/{MARK}")).to_owned(),
                    token: s("/headers/Authorization")
                        .trim_start_matches("Bearer ")
                        .to_owned(),
                });
            }
        }
    }
    out
}

/// The settings file: `None` when missing; an error naming the line and column of bad JSON.
pub fn read(path: &Path) -> anyhow::Result<Option<Value>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let v: Value = serde_json::from_slice(&bytes).map_err(|e| {
        anyhow::anyhow!(
            "{} is not valid JSON (line {}, column {}): {e}; fix it first, nothing was changed",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    if !v.is_object() {
        bail!(
            "{} does not hold a JSON object; nothing was changed",
            path.display()
        );
    }
    Ok(Some(v))
}

/// Writes the settings: a missing directory is made (0700), the file before the change is copied
/// to `<file>.bridge-backup`, the new one written through a temporary file and a rename, owner-only
/// (it holds a credential). A file without its owner's write permission is refused untouched.
pub fn write(path: &Path, value: &Value) -> anyhow::Result<Option<PathBuf>> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut backup = None;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.permissions().mode() & 0o200 == 0 {
            bail!(
                "{} is read-only (mode {:o}): nothing was changed; make it writable (chmod u+w) to install",
                path.display(),
                meta.permissions().mode() & 0o777
            );
        }
        let name = format!(
            "{}.bridge-backup",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        let b = dir.join(name);
        std::fs::copy(path, &b).with_context(|| format!("cannot write {}", b.display()))?;
        let _ = std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o600));
        backup = Some(b);
    }
    let tmp = dir.join(format!(
        ".{}.bridge-tmp-{}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let mut text = serde_json::to_string_pretty(value).expect("a JSON value");
    text.push('\n');
    if let Err(e) = crate::core::util::write_private_via(&tmp, path, text.as_bytes()) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(backup)
}

#[derive(clap::Parser, Debug)]
#[command(
    name = "bridge-relay hooks",
    about = "Claude Code's hooks for terminal sessions: every claude started afterwards reports to the relay"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Args, Debug)]
struct Where {
    /// Claude Code's settings file [default: $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json]
    #[arg(long)]
    settings: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct Relay {
    /// The relay's URL [default: the one the relay of --data-dir last listened on, else
    /// http://127.0.0.1:8787]
    #[arg(long)]
    url: Option<String>,
    /// The controller token's file [default: BRIDGE_RELAY_TOKEN, else the token the relay of
    /// --data-dir generated]
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// The relay's data directory (where it records its URL and a token it generated)
    #[arg(long)]
    data_dir: Option<PathBuf>,
}

impl Relay {
    fn data_dir(&self) -> PathBuf {
        self.data_dir
            .clone()
            .unwrap_or_else(crate::core::config::default_data_dir)
    }

    /// `--url`, else what the relay recorded in its data dir, else the default address.
    fn url(&self) -> String {
        self.url
            .clone()
            .or_else(|| {
                std::fs::read_to_string(self.data_dir().join("relay-url"))
                    .ok()
                    .map(|u| u.trim().to_owned())
                    .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
            })
            .unwrap_or_else(default_url)
            .trim_end_matches('/')
            .to_owned()
    }
}

#[derive(clap::Subcommand, Debug)]
enum Cmd {
    /// Write the hooks (a new hook-only credential; earlier entries replaced)
    Install {
        #[command(flatten)]
        at: Where,
        #[command(flatten)]
        relay: Relay,
    },
    /// Remove exactly what install wrote, and revoke its credential
    Uninstall {
        #[command(flatten)]
        at: Where,
        #[command(flatten)]
        relay: Relay,
    },
    /// Show the entries and whether the relay answers them
    Status {
        #[command(flatten)]
        at: Where,
    },
}

fn settings_path(w: &Where) -> anyhow::Result<PathBuf> {
    if let Some(p) = &w.settings {
        return Ok(p.clone());
    }
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d).join("settings.json"));
    }
    let home = std::env::var_os("HOME").context("HOME is not set: pass --settings FILE")?;
    Ok(PathBuf::from(home).join(".claude/settings.json"))
}

fn default_url() -> String {
    format!("http://{}", crate::core::config::DEFAULT_BIND)
}

/// The controller token the way the relay reads it: `--token-file`, else `BRIDGE_RELAY_TOKEN`, else
/// the one it generated on its first start (`<data dir>/controller-token`).
fn controller_token(r: &Relay) -> anyhow::Result<String> {
    if let Some(f) = &r.token_file {
        return crate::core::config::read_token_file(f);
    }
    if let Ok(t) = std::env::var("BRIDGE_RELAY_TOKEN")
        && !t.trim().is_empty()
    {
        return Ok(t.trim().to_owned());
    }
    let generated = r.data_dir().join("controller-token");
    if generated.is_file() {
        return crate::core::config::read_token_file(&generated);
    }
    bail!(
        "the controller token is needed: --token-file FILE (as the relay is started with), BRIDGE_RELAY_TOKEN, \
         or --data-dir of a relay that generated one"
    )
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("an HTTP client")
}

/// Revokes hook credentials at the relay; what could not be revoked, with why.
async fn revoke(url: &str, token: &str, ids: &[String]) -> Vec<(String, String)> {
    let mut failed = Vec::new();
    for id in ids {
        let r = client()
            .delete(format!("{}/v1/credentials/{id}", url.trim_end_matches('/')))
            .bearer_auth(token)
            .send()
            .await;
        match r {
            Ok(r) if r.status().is_success() || r.status().as_u16() == 404 => {}
            Ok(r) => failed.push((id.clone(), format!("the relay answered {}", r.status()))),
            Err(e) => failed.push((id.clone(), format!("the relay is not reachable ({e})"))),
        }
    }
    failed
}

fn ids(entries: &[Installed]) -> Vec<String> {
    let mut ids: Vec<String> = entries
        .iter()
        .map(|e| e.credential_id.clone())
        .filter(|i| !i.is_empty())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

async fn run_install(at: &Where, relay: &Relay) -> anyhow::Result<()> {
    let path = settings_path(at)?;
    let url = relay.url();
    let token = controller_token(relay)?;
    let current = read(&path)?;
    // Checked before anything is minted: a file of a shape we cannot extend stops here.
    install(
        current.as_ref(),
        &HookConfig {
            url: url.clone(),
            token: String::new(),
            credential_id: String::new(),
        },
    )
    .map_err(|e| anyhow::anyhow!("{}: {e}; nothing was changed", path.display()))?;
    let r = client()
        .post(format!("{url}/v1/hooks/credentials"))
        .bearer_auth(&token)
        .json(&json!({}))
        .send()
        .await
        .map_err(|e| {
            anyhow::anyhow!(
                "is the relay running at {url}? ({e}) Start it first, or pass --url; nothing was changed"
            )
        })?;
    if !r.status().is_success() {
        let status = r.status();
        let body = r.text().await.unwrap_or_default();
        bail!(
            "the relay at {url} refused a hook credential ({status}: {body}); is this its controller token? Nothing was changed"
        );
    }
    let minted: Value = r.json().await.context("the relay's answer")?;
    let (Some(id), Some(secret)) = (minted["id"].as_str(), minted["token"].as_str()) else {
        bail!("the relay at {url} answered without a credential; nothing was changed");
    };
    let earlier = ids(&current.as_ref().map(installed).unwrap_or_default());
    let new = install(
        current.as_ref(),
        &HookConfig {
            url: url.clone(),
            token: secret.to_owned(),
            credential_id: id.to_owned(),
        },
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let backup = match write(&path, &new) {
        Ok(b) => b,
        Err(e) => {
            // The credential would sit unused: take it back.
            let _ = revoke(&url, &token, &[id.to_owned()]).await;
            return Err(e);
        }
    };
    let stale: Vec<String> = earlier.into_iter().filter(|e| e != id).collect();
    for (old, why) in revoke(&url, &token, &stale).await {
        println!(
            "note: the earlier hook credential {old} could not be revoked ({why}); revoke it in the console"
        );
    }
    println!("Claude Code hooks written to {}", path.display());
    if let Some(b) = backup {
        println!("  the file before: {}", b.display());
    }
    println!("  events: {}", EVENTS.join(", "));
    println!("  credential: {id} (hook events only; revoke with DELETE /v1/credentials/{id})");
    println!(
        "Every claude started from now on reports to {url}. A relay that is down never holds the CLI: it falls back to its own prompt."
    );
    Ok(())
}

async fn run_uninstall(at: &Where, relay: &Relay) -> anyhow::Result<()> {
    let path = settings_path(at)?;
    let Some(current) = read(&path)? else {
        println!("{} does not exist: nothing to remove", path.display());
        return Ok(());
    };
    let entries = installed(&current);
    let (new, removed) = uninstall(&current);
    if removed == 0 {
        println!(
            "no Bridge Console hooks in {}: nothing removed",
            path.display()
        );
        return Ok(());
    }
    let backup = write(&path, &new)?;
    println!(
        "removed {removed} Bridge Console hooks from {}",
        path.display()
    );
    if let Some(b) = backup {
        println!("  the file before: {}", b.display());
    }
    let url = match (&relay.url, entries.first()) {
        (Some(u), _) => u.trim_end_matches('/').to_owned(),
        (None, Some(e)) => e.url.clone(),
        (None, None) => relay.url(),
    };
    match controller_token(relay) {
        Ok(token) => {
            for (id, why) in revoke(&url, &token, &ids(&entries)).await {
                println!(
                    "note: credential {id} could not be revoked ({why}); it stays listed until it is revoked in the console"
                );
            }
        }
        Err(_) => println!(
            "note: no controller token given, so credential(s) {} stay listed until revoked in the console",
            ids(&entries).join(", ")
        ),
    }
    Ok(())
}

async fn run_status(at: &Where) -> anyhow::Result<()> {
    let path = settings_path(at)?;
    let entries = read(&path)?.as_ref().map(installed).unwrap_or_default();
    if entries.is_empty() {
        println!(
            "no Bridge Console hooks in {} (bridge-relay hooks install)",
            path.display()
        );
        return Ok(());
    }
    println!("Bridge Console hooks in {}:", path.display());
    for e in &entries {
        println!(
            "  {:<18} {}  credential {}",
            e.event, e.url, e.credential_id
        );
    }
    let e = &entries[0];
    let r = client()
        .get(format!("{}/v1/hooks", e.url))
        .bearer_auth(&e.token)
        .send()
        .await;
    match r {
        Ok(r) if r.status().is_success() => {
            let v: Value = r.json().await.unwrap_or(Value::Null);
            println!(
                "the relay answers, the credential is valid; terminal prompts {} (wait {} s)",
                if v["send_to_phone"] == true {
                    "are held for an answer from the console"
                } else {
                    "are left to the terminal"
                },
                v["wait_secs"]
            );
        }
        Ok(r) if r.status().as_u16() == 401 => {
            println!("the credential was revoked: run `bridge-relay hooks install` again")
        }
        Ok(r) => println!("the relay answered {}", r.status()),
        Err(_) => println!(
            "the relay is not reachable at {} (hooks then fail at once; claude carries on)",
            e.url
        ),
    }
    Ok(())
}

/// `bridge-relay hooks …`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    use clap::Parser as _;
    let cli = Cli::parse_from(
        std::iter::once("bridge-relay hooks".to_owned()).chain(args.iter().cloned()),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        match &cli.cmd {
            Cmd::Install { at, relay } => run_install(at, relay).await,
            Cmd::Uninstall { at, relay } => run_uninstall(at, relay).await,
            Cmd::Status { at } => run_status(at).await,
        }
    })
}

#[cfg(test)]
mod tests;
