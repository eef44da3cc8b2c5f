//! Line diffs for Edit / MultiEdit cards and the permission dialog's live preview (via `similar`).

use similar::{ChangeTag, TextDiff};

/// One line of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffLine {
    /// `' '` unchanged, `'-'` removed, `'+'` added.
    pub sign: char,
    /// The line, without its newline.
    pub text: String,
}

/// A line diff of `old` → `new`. Unchanged lines farther than `context` lines from a change are
/// folded into a single `…` line (`sign == '…'`).
pub fn diff_lines(old: &str, new: &str, context: usize) -> Vec<DiffLine> {
    let diff = TextDiff::from_lines(old, new);
    let mut all: Vec<DiffLine> = diff
        .iter_all_changes()
        .map(|c| DiffLine {
            sign: match c.tag() {
                ChangeTag::Equal => ' ',
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
            },
            text: c.value().trim_end_matches(['\n', '\r']).to_string(),
        })
        .collect();
    if all.iter().all(|l| l.sign == ' ') {
        return all;
    }
    let near: Vec<bool> = (0..all.len())
        .map(|i| {
            let lo = i.saturating_sub(context);
            let hi = (i + context + 1).min(all.len());
            all[lo..hi].iter().any(|l| l.sign != ' ')
        })
        .collect();
    let mut out = Vec::with_capacity(all.len());
    let mut folded = false;
    for (i, line) in all.drain(..).enumerate() {
        if near[i] {
            out.push(line);
            folded = false;
        } else if !folded {
            out.push(DiffLine {
                sign: '…',
                text: String::new(),
            });
            folded = true;
        }
    }
    out
}

/// The lines of a unified diff (`git diff` output, or the relay's): file headers (`diff --git`,
/// `index`, `---`/`+++`, modes, renames) are left out, each hunk header becomes a fold line
/// (`sign == '…'`) carrying its `@@ … @@` text, and `\ No newline at end of file` is dropped.
pub fn parse_unified(text: &str) -> Vec<DiffLine> {
    let mut out = Vec::new();
    // Lines still expected in the current hunk (old side, new side).
    let (mut old_left, mut new_left) = (0u64, 0u64);
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if old_left == 0 && new_left == 0 {
            if let Some((o, n)) = hunk_sizes(line) {
                (old_left, new_left) = (o, n);
                out.push(DiffLine {
                    sign: '…',
                    text: line.to_string(),
                });
            }
            continue;
        }
        let (sign, rest) = match line.chars().next() {
            Some('+') => ('+', &line[1..]),
            Some('-') => ('-', &line[1..]),
            Some(' ') => (' ', &line[1..]),
            Some('\\') => continue,
            // An empty context line (some tools strip the space).
            None => (' ', ""),
            Some(_) => {
                (old_left, new_left) = (0, 0);
                continue;
            }
        };
        if sign != '+' {
            old_left = old_left.saturating_sub(1);
        }
        if sign != '-' {
            new_left = new_left.saturating_sub(1);
        }
        out.push(DiffLine {
            sign,
            text: rest.to_string(),
        });
    }
    out
}

/// `(old lines, new lines)` of a hunk header `@@ -a[,b] +c[,d] @@…`.
fn hunk_sizes(line: &str) -> Option<(u64, u64)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let size = |r: &str| match r.split_once(',') {
        Some((_, n)) => n.parse::<u64>().ok(),
        None => r.parse::<u64>().ok().map(|_| 1),
    };
    Some((size(old)?, size(new)?))
}

/// Counts of removed and added lines.
pub fn diff_stats(lines: &[DiffLine]) -> (usize, usize) {
    (
        lines.iter().filter(|l| l.sign == '-').count(),
        lines.iter().filter(|l| l.sign == '+').count(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_removed_and_added_lines() {
        let d = diff_lines("a\nb\nc\n", "a\nB\nc\n", 3);
        let signs: String = d.iter().map(|l| l.sign).collect();
        assert_eq!(signs, " -+ ");
        assert_eq!(d[1].text, "b");
        assert_eq!(d[2].text, "B");
        assert_eq!(diff_stats(&d), (1, 1));
    }

    #[test]
    fn reads_unified_diffs() {
        let text = "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@ fn f\n a\n--- old dashes\n+++ new pluses\n c\n\\ No newline at end of file\ndiff --git a/y b/y\nnew file mode 100644\n--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+y\n";
        let d = parse_unified(text);
        let got: Vec<(char, &str)> = d.iter().map(|l| (l.sign, l.text.as_str())).collect();
        assert_eq!(
            got,
            vec![
                ('…', "@@ -1,3 +1,3 @@ fn f"),
                (' ', "a"),
                ('-', "-- old dashes"),
                ('+', "++ new pluses"),
                (' ', "c"),
                ('…', "@@ -0,0 +1 @@"),
                ('+', "y"),
            ]
        );
        assert_eq!(diff_stats(&d), (1, 2));
        assert!(parse_unified("").is_empty());
    }

    #[test]
    fn folds_far_context() {
        let old: String = (0..50).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l25\n", "changed\n");
        let d = diff_lines(&old, &new, 2);
        assert_eq!(d.iter().filter(|l| l.sign == '…').count(), 2);
        assert!(d.len() < 12);
    }

    #[test]
    fn no_trailing_newline_and_empty_inputs() {
        assert_eq!(
            diff_lines("", "x", 3),
            vec![DiffLine {
                sign: '+',
                text: "x".into()
            }]
        );
        assert_eq!(
            diff_lines("x", "", 3),
            vec![DiffLine {
                sign: '-',
                text: "x".into()
            }]
        );
        assert!(diff_lines("same", "same", 3).iter().all(|l| l.sign == ' '));
    }
}
