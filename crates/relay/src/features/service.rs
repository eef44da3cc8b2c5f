//! `bridge-relay service print|install|uninstall [-- RELAY ARGS]`: the relay as a systemd user
//! service. `print` writes the unit to stdout; `install` writes it to
//! `$XDG_CONFIG_HOME/systemd/user/bridge-relay.service` (default `~/.config/…`) and says how to
//! start it; `uninstall` removes that file. The unit runs this very binary (its absolute path) with
//! the arguments given after `--`; it never holds a secret (use `--token-file`, read at start).

use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// The unit's file name.
pub const UNIT_NAME: &str = "bridge-relay.service";

/// The unit text for `exe` started with `args`.
pub fn unit(exe: &Path, args: &[String]) -> anyhow::Result<String> {
    for a in args {
        if a.contains('\n') || a.contains('\0') {
            anyhow::bail!("a relay argument holds a line break or NUL: {a:?}");
        }
    }
    let mut exec = quote(&exe.display().to_string());
    for a in args {
        exec.push(' ');
        exec.push_str(&quote(a));
    }
    Ok(format!(
        "# Written by `bridge-relay service install`; `bridge-relay service uninstall` removes it.
[Unit]
Description=Bridge Console relay (remote console for Claude Code)
After=network-online.target

[Service]
Type=simple
# Sessions start here unless --cwd says otherwise.
WorkingDirectory=%h
ExecStart={exec}
Restart=on-failure
RestartSec=2
# The controller token: --token-file FILE (owner-only), never an argument or variable here.
NoNewPrivileges=true

[Install]
WantedBy=default.target
"
    ))
}

/// One word of `ExecStart=`: as is when plain, else double-quoted with `\\`, `\"` escaped; `%` and
/// `$` doubled so systemd expands nothing.
fn quote(word: &str) -> String {
    let escaped = word.replace('%', "%%").replace('$', "$$");
    let plain = !escaped.is_empty()
        && escaped
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+%$".contains(c));
    if plain {
        return escaped;
    }
    format!("\"{}\"", escaped.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Where `install` writes the unit.
pub fn unit_path() -> anyhow::Result<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => PathBuf::from(
            std::env::var_os("HOME").context("HOME is not set: cannot find ~/.config")?,
        )
        .join(".config"),
    };
    Ok(base.join("systemd/user").join(UNIT_NAME))
}

/// Runs `bridge-relay service …` (`rest` is what follows `service`).
pub fn run(rest: &[String]) -> anyhow::Result<()> {
    let usage = "usage: bridge-relay service print|install|uninstall [-- RELAY ARGS]";
    let (cmd, tail) = rest.split_first().context(usage)?;
    let args: Vec<String> = match tail.split_first() {
        None => Vec::new(),
        Some((dash, args)) if dash == "--" => args.to_vec(),
        Some(_) => anyhow::bail!("{usage}"),
    };
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("cannot find this executable's path")?;
    match cmd.as_str() {
        "print" => print!("{}", unit(&exe, &args)?),
        "install" => {
            let path = unit_path()?;
            let text = unit(&exe, &args)?;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("wrote {}", path.display());
            println!("start it now and at every login:");
            println!(
                "  systemctl --user daemon-reload && systemctl --user enable --now bridge-relay"
            );
            println!("its output (the login link): journalctl --user -u bridge-relay");
            println!(
                "to keep it running while you are logged out: loginctl enable-linger \"$USER\""
            );
        }
        "uninstall" => {
            let path = unit_path()?;
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    println!("removed {}", path.display());
                    println!(
                        "  systemctl --user disable --now bridge-relay; systemctl --user daemon-reload"
                    );
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    println!("{} is not installed", path.display());
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot remove {}", path.display()));
                }
            }
        }
        _ => anyhow::bail!("{usage}"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_runs_this_binary_with_the_given_arguments_quoted() {
        let u = unit(
            Path::new("/home/a b/.local/bin/bridge-relay"),
            &[
                "--token-file".into(),
                "/home/a b/.bridge-token".into(),
                "--cwd".into(),
                "/src/100%$x".into(),
            ],
        )
        .unwrap();
        assert!(
            u.contains(
                "ExecStart=\"/home/a b/.local/bin/bridge-relay\" --token-file \"/home/a b/.bridge-token\" --cwd /src/100%%$$x\n"
            ),
            "{u}"
        );
        assert!(u.contains("WantedBy=default.target"));
        assert!(unit(Path::new("/x"), &["a\nExecStartPre=/bin/evil".into()]).is_err());
        assert_eq!(quote("say \"hi\" \\"), "\"say \\\"hi\\\" \\\\\"");
    }
}
