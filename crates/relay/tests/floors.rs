//! The relay's floors (docs/architecture.md): `core` < `edge` < `features` < `cluster` < `http`.
//! A file imports from its own floor or the ones below; this reads every source file and fails on
//! a path (outside comments) that names a floor above the file's own. The core also names no HTTP:
//! its errors are its own (`core/error.rs`), answered with a status at the edge (`edge/error.rs`).

use std::path::{Path, PathBuf};

const FLOORS: [&str; 5] = ["core", "edge", "features", "cluster", "http"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `crate::<floor>` paths in the code of `text` (comments left out), with their line numbers.
fn named_floors(text: &str) -> Vec<(usize, &'static str)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            if let Some(f) = FLOORS.iter().find(|f| {
                rest.starts_with(**f)
                    && !rest[f.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
            }) {
                found.push((n + 1, *f));
            }
        }
    }
    found
}

#[test]
fn no_file_names_a_floor_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (level, floor) in FLOORS.iter().enumerate() {
        let mut files = Vec::new();
        rust_files(&src.join(floor), &mut files);
        assert!(!files.is_empty(), "src/{floor} holds no source file");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (line, named) in named_floors(&text) {
                let above = FLOORS.iter().position(|x| *x == named).unwrap() > level;
                if above {
                    wrong.push(format!("{}:{line} names crate::{named}", f.display()));
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "read {checked} files");
    assert!(
        wrong.is_empty(),
        "imports that run up a floor:\n{}",
        wrong.join("\n")
    );
}

/// Names of the HTTP stack that the core must not use (outside comments), with their line numbers.
const HTTP_NAMES: [&str; 5] = ["axum", "StatusCode", "http::", "hyper", "IntoResponse"];

fn named_http(text: &str) -> Vec<(usize, &'static str)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for name in HTTP_NAMES {
            if code.contains(name) {
                found.push((n + 1, name));
            }
        }
    }
    found
}

#[test]
fn the_core_names_no_http() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core"),
        &mut files,
    );
    assert!(files.len() > 20, "read {} files", files.len());
    let mut wrong = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (line, name) in named_http(&text) {
            wrong.push(format!("{}:{line} names {name}", f.display()));
        }
    }
    assert!(
        wrong.is_empty(),
        "the core answers with core::error::Error (a Fault), the edge maps it to HTTP \
         (edge/error.rs):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_http_reader_sees_code_not_comments() {
    let text = "use axum::Json;\n/// an [`axum`] answer\nlet s = StatusCode::OK; // http::\nlet url = \"http://x\";";
    assert_eq!(named_http(text), vec![(1, "axum"), (3, "StatusCode")]);
}

#[test]
fn the_reader_sees_paths_in_code_not_in_comments() {
    let text = "use crate::core::store;\nlet x = crate::cluster::Cluster::of(&r); // crate::http\n/// [`crate::edge`]\nuse crate::coredump;";
    assert_eq!(named_floors(text), vec![(1, "core"), (2, "cluster")]);
}
