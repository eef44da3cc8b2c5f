//! `bridge-demo-agent`: a scripted agent that speaks the stdio stream-json protocol of Claude Code 2.1.332.
//!
//! It lets the console run with no Claude account and makes tests deterministic. It answers `initialize`,
//! streams scenario turns (thinking, markdown text, tool calls with `can_use_tool` prompts it honours),
//! handles `interrupt`, `set_model`, `set_permission_mode`, and ends each turn with a `result`. Scenarios are
//! JSON data ([`Scenario`]); see the crate README for the schema.
//!
//! ```no_run
//! // What `bridge-relay --demo` runs in its child process:
//! bridge_demo_agent::run_cli(std::env::args().collect()).unwrap();
//! ```

mod agent;
mod cli;
pub mod harness;
mod info;
pub mod scenario;
pub mod tools;

use std::io::{BufRead, Write};

pub use agent::{
    DEMO_VERSION, MODELS, ModelDef, PERMISSION_MODES, cost_usd, describe_images, normalize_mode,
    resolve_model,
};
pub use cli::{CliConfig, parse_args};
pub use scenario::{BUILTIN_NAMES, Scenario, ScenarioError};

/// Env var selecting the scenario (a builtin name or a file path); `--scenario` wins over it.
pub const ENV_SCENARIO: &str = "BRIDGE_DEMO_SCENARIO";
/// Env var scaling every delay: `1` = realistic pacing, `0.1` = ten times faster, `0` = no delays.
pub const ENV_SPEED: &str = "BRIDGE_DEMO_SPEED";

/// How the agent behaves (the CLI flags it was started with).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentOptions {
    /// `--model` (an alias such as `opus` or a model id). `None`: the default model.
    pub model: Option<String>,
    /// `--permission-mode` (`default`, `acceptEdits`, `bypassPermissions`, `plan`, `dontAsk`, `auto`).
    pub permission_mode: String,
    /// `--replay-user-messages`: echo `user` and `control_response` frames.
    pub replay_user_messages: bool,
    /// `--include-partial-messages`: write `stream_event` frames.
    pub include_partial_messages: bool,
    /// Multiplies every delay (see [`ENV_SPEED`]); 0 disables them.
    pub speed: f64,
    /// Reported as `cwd` and used in simulated paths.
    pub cwd: String,
    /// `--session-id`; a fresh UUID when `None`.
    pub session_id: Option<String>,
}

impl Default for AgentOptions {
    /// The flags the relay passes, with no delays (handy for tests).
    fn default() -> Self {
        AgentOptions {
            model: None,
            permission_mode: "default".into(),
            replay_user_messages: true,
            include_partial_messages: true,
            speed: 0.0,
            cwd: std::env::current_dir()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "/".into()),
            session_id: None,
        }
    }
}

/// Returned by [`run`] when the scenario makes the agent exit abnormally (`crash` step). [`run_cli`] writes
/// `message` to stderr and exits the process with `code`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("demo agent crashed (exit code {code}): {message}")]
pub struct AgentExit {
    pub code: i32,
    pub message: String,
}

/// Speaks the protocol on `input`/`output` until `input` reaches EOF and the queued turns are done.
///
/// `input` is read on a separate thread, so control requests (interrupt, permission answers) are handled
/// while a turn streams. Returns `Err` with an [`AgentExit`] inside for a scenario crash, or an I/O error.
pub fn run(
    scenario: Scenario,
    opts: AgentOptions,
    input: impl BufRead + Send + 'static,
    output: impl Write,
) -> anyhow::Result<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("demo-agent-stdin".into())
        .spawn(move || agent::read_loop(input, tx))?;
    agent::Agent::new(scenario, opts, rx, output).serve()
}

/// Entry point of the `bridge-demo-agent` binary and of `bridge-relay demo-agent`: parses claude-style flags
/// (unknown ones are ignored; leading positional arguments such as the program name are skipped) plus
/// `--scenario FILE|NAME` and `--demo-speed X`, then speaks stream-json on stdin/stdout.
///
/// On a scenario crash it writes the message to stderr and **exits the process** with the scenario's code.
pub fn run_cli(args: Vec<String>) -> anyhow::Result<()> {
    let cfg = parse_args(&args)?;
    let name = cfg
        .scenario
        .clone()
        .or_else(|| std::env::var(ENV_SCENARIO).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "default".into());
    let scenario = Scenario::resolve(&name)?;
    let mut opts = cfg.options;
    if cfg.speed.is_none()
        && let Ok(s) = std::env::var(ENV_SPEED)
    {
        match s.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => opts.speed = v,
            _ => {
                eprintln!("bridge-demo-agent: ignoring {ENV_SPEED}={s:?} (expected a number >= 0)")
            }
        }
    }
    eprintln!(
        "bridge-demo-agent {DEMO_VERSION}: scenario {name:?}, speed {}, permission mode {}",
        opts.speed, opts.permission_mode
    );
    let input = std::io::BufReader::new(std::io::stdin());
    let output = std::io::stdout().lock();
    match run(scenario, opts, input, output) {
        Ok(()) => Ok(()),
        Err(e) => match e.downcast_ref::<AgentExit>() {
            Some(exit) => {
                if !exit.message.is_empty() {
                    eprintln!("{}", exit.message);
                }
                std::process::exit(exit.code);
            }
            None => Err(e),
        },
    }
}
