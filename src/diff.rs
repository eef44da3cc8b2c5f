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
