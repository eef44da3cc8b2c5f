//! The committed fuzz corpus (`fuzz/corpus/<target>/`) replayed through the fuzz targets' own bodies
//! (`fuzz/src/targets/`, the code libFuzzer runs): every input once, as `cargo fuzz run <target> --
//! -runs=0` would, but inside this test binary — no build of the fuzz workspace. A panic (an
//! assertion of the target's properties, an overflow: this is a debug build) fails the test and
//! names the input. Finding new inputs is `scripts/fuzz.sh` (libFuzzer, for as long as you give it).

#[path = "../../../fuzz/src/lib.rs"]
#[allow(dead_code, unused_imports, clippy::all, clippy::pedantic)]
mod bridge_fuzz;

use std::path::{Path, PathBuf};

fn replay(target: &str, run: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "{}: no corpus", dir.display());
    let mut failed = Vec::new();
    for path in &inputs {
        let data = std::fs::read(path).unwrap();
        if std::panic::catch_unwind(|| run(&data)).is_err() {
            failed.push(path.display().to_string());
        }
    }
    println!(
        "fuzz corpus {target}: {} inputs replayed, {} failed",
        inputs.len(),
        failed.len()
    );
    assert!(
        failed.is_empty(),
        "{target}: these inputs fail: {failed:#?}"
    );
}

/// One test per fuzz target, named after it: the target's corpus replayed.
macro_rules! replay_tests {
    ($($target:ident),* $(,)?) => {$(
        #[test]
        fn $target() {
            replay(stringify!($target), bridge_fuzz::targets::$target::input);
        }
    )*};
}

replay_tests!(
    ndjson,
    sse,
    cluster,
    hooks,
    envelope,
    partial_json,
    markdown,
    relay_http
);
