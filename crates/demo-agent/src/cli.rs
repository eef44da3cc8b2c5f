//! Claude-style command-line flags.

use crate::AgentOptions;
use crate::agent::normalize_mode;

/// What [`parse_args`] understood.
#[derive(Debug, Clone, PartialEq)]
pub struct CliConfig {
    pub options: AgentOptions,
    /// `--scenario` (builtin name or file).
    pub scenario: Option<String>,
    /// `--demo-speed`, when given (it wins over `BRIDGE_DEMO_SPEED`).
    pub speed: Option<f64>,
}

/// Flags of the real CLI that take no value (so the next argument is not swallowed).
const BOOLEAN_FLAGS: &[&str] = &[
    "--verbose",
    "--include-partial-messages",
    "--replay-user-messages",
    "--continue",
    "-c",
    "--print",
    "-p",
    "--debug",
    "--strict-mcp-config",
    "--include-hook-events",
    "--fork-session",
    "--no-session-persistence",
    "--await-initialize",
    "--session-mirror",
    "--managed-settings-in-initialize",
    "--enable-auth-status",
    "--dangerously-skip-permissions",
    "--allow-dangerously-skip-permissions",
];

/// Parses the flags the relay passes (`--output-format stream-json --verbose --input-format stream-json
/// --permission-prompt-tool stdio --include-partial-messages --replay-user-messages --model M
/// --permission-mode P`), both `--flag value` and `--flag=value`. Unknown flags are ignored (an unknown
/// `--flag` followed by a non-flag argument is taken to be `--flag value`). Positional arguments are ignored.
pub fn parse_args(args: &[String]) -> anyhow::Result<CliConfig> {
    let mut opts = AgentOptions {
        replay_user_messages: false,
        include_partial_messages: false,
        speed: 1.0,
        ..AgentOptions::default()
    };
    let mut scenario = None;
    let mut speed = None;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if !arg.starts_with('-') || arg == "-" {
            continue;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (arg, None),
        };
        if BOOLEAN_FLAGS.contains(&flag) {
            match flag {
                "--include-partial-messages" => opts.include_partial_messages = true,
                "--replay-user-messages" => opts.replay_user_messages = true,
                "--dangerously-skip-permissions" => {
                    opts.permission_mode = "bypassPermissions".into()
                }
                _ => {}
            }
            continue;
        }
        let value = match inline {
            Some(v) => Some(v),
            None if i < args.len() && !args[i].starts_with("--") => {
                i += 1;
                Some(args[i - 1].clone())
            }
            None => None,
        };
        let need = |v: Option<String>| v.ok_or_else(|| anyhow::anyhow!("{flag} needs a value"));
        match flag {
            "--model" => opts.model = Some(need(value)?),
            "--permission-mode" => {
                let v = need(value)?;
                let mode = normalize_mode(&v).ok_or_else(|| {
                    anyhow::anyhow!(
                        "invalid --permission-mode {v:?} (expected one of {})",
                        crate::PERMISSION_MODES.join(", ")
                    )
                })?;
                opts.permission_mode = mode.into();
            }
            "--scenario" => scenario = Some(need(value)?),
            "--session-id" => opts.session_id = Some(need(value)?),
            "--demo-speed" => {
                let v = need(value)?;
                let s: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                    .ok_or_else(|| {
                        anyhow::anyhow!("invalid --demo-speed {v:?} (expected a number >= 0)")
                    })?;
                opts.speed = s;
                speed = Some(s);
            }
            "--demo-cwd" => opts.cwd = need(value)?,
            // --output-format / --input-format / --permission-prompt-tool and everything unknown: accepted,
            // ignored (the agent always speaks stream-json and prompts over stdio).
            _ => {}
        }
    }
    Ok(CliConfig {
        options: opts,
        scenario,
        speed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn relay_flags() {
        let c = parse_args(&args(
            "bridge-relay demo-agent --scenario long --output-format stream-json --verbose --input-format stream-json \
             --permission-prompt-tool stdio --include-partial-messages --replay-user-messages --model opus \
             --permission-mode acceptEdits --settings {} --add-dir /tmp --some-bool",
        ))
        .unwrap();
        assert_eq!(c.scenario.as_deref(), Some("long"));
        assert_eq!(c.options.model.as_deref(), Some("opus"));
        assert_eq!(c.options.permission_mode, "acceptEdits");
        assert!(c.options.replay_user_messages);
        assert!(c.options.include_partial_messages);
        assert_eq!(c.speed, None);
    }

    #[test]
    fn equals_form_and_defaults() {
        let c = parse_args(&args(
            "--model=claude-x --permission-mode=manual --demo-speed=0",
        ))
        .unwrap();
        assert_eq!(c.options.model.as_deref(), Some("claude-x"));
        assert_eq!(c.options.permission_mode, "default");
        assert_eq!(c.speed, Some(0.0));
        assert!(!c.options.replay_user_messages);
        assert!(parse_args(&args("--permission-mode yolo")).is_err());
        assert!(parse_args(&args("--model")).is_err());
    }
}
