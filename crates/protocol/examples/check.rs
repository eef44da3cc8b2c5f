//! Checks NDJSON captures against the protocol types.
//!
//! ```text
//! cargo run -p bridge-protocol --example check -- FILE...
//! ```
//!
//! Each file is plain NDJSON (every line a CLI→client message) or the capture format where a line
//! starts with `>> ` (client→CLI, parsed as `ClientMessage`) or `<< ` (CLI→client, parsed as
//! `CliMessage`); lines starting with `#` are comments. Prints one JSON summary per file:
//! `{"file","lines","known","unknown":{"<type/subtype>":n},"errors":[{"line","error"}]}`, and exits
//! with status 1 if any line is an error.

use std::collections::BTreeMap;
use std::process::ExitCode;

use bridge_protocol::framing::{DEFAULT_MAX_LINE_BYTES, NdjsonDecoder};
use bridge_protocol::{parse_cli_line, parse_client_line};
use serde_json::json;

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: check FILE...  (NDJSON, plain or with `>> ` / `<< ` prefixes)");
        return ExitCode::from(2);
    }
    let mut failed = false;
    for file in files {
        let bytes = match std::fs::read(&file) {
            Ok(bytes) => bytes,
            Err(err) => {
                eprintln!("check: cannot read {file}: {err}");
                failed = true;
                continue;
            }
        };
        let summary = check(&bytes);
        failed |= !summary.errors.is_empty();
        let errors: Vec<_> = summary
            .errors
            .iter()
            .map(|(line, error)| json!({ "line": line, "error": error }))
            .collect();
        let report = json!({
            "file": file,
            "lines": summary.lines,
            "known": summary.known,
            "unknown": summary.unknown,
            "errors": errors,
        });
        println!("{report}");
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[derive(Default)]
struct Summary {
    lines: u64,
    known: u64,
    unknown: BTreeMap<String, u64>,
    errors: Vec<(u64, String)>,
}

fn check(bytes: &[u8]) -> Summary {
    let mut summary = Summary::default();
    let mut decoder = NdjsonDecoder::new(DEFAULT_MAX_LINE_BYTES);
    let mut items = decoder.feed(bytes);
    items.extend(decoder.finish());
    for item in items {
        let line = match item {
            Ok(line) => line,
            Err(err) => {
                summary.lines += 1;
                summary.errors.push((err.line(), err.to_string()));
                continue;
            }
        };
        if line.text.starts_with('#') {
            continue;
        }
        summary.lines += 1;
        let outcome = if let Some(rest) = line.text.strip_prefix(">> ") {
            parse_client_line(rest).map(|message| (message.is_known(), message.kind()))
        } else {
            let rest = line.text.strip_prefix("<< ").unwrap_or(&line.text);
            parse_cli_line(rest).map(|message| (message.is_known(), message.kind()))
        };
        match outcome {
            Ok((true, _)) => summary.known += 1,
            Ok((false, kind)) => *summary.unknown.entry(kind).or_default() += 1,
            Err(err) => summary.errors.push((line.number, err.to_string())),
        }
    }
    summary
}
