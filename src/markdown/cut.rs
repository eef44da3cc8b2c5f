//! Where a growing paragraph can be cut for good while it streams: the text before the cut is
//! rendered once and kept, only what follows is parsed again as more arrives (issue 29).

use pulldown_cmark::{Event, Parser, Tag};

use super::{MdNode, OPTIONS, into_paragraph, parse};

/// Where a growing paragraph can be cut for good (streaming: the text before the cut is rendered
/// once and kept, only what follows is parsed again as more arrives). `src` is the paragraph's
/// source from its start or from an earlier cut. The cut is the last point after a space and
/// before a letter, mid-line, such that nothing before it can pair with anything after it: every
/// code span, link and inline HTML opened before it is closed, and no `*`, `_` or `~` run left
/// over could open emphasis that later text closes. Parsing the two sides on their own then gives
/// the whole paragraph's inline content: a closer only pairs with an opener before it, and the
/// text after the cut starts a line with a letter (a paragraph whatever follows). Returns the cut
/// and the inline nodes before it (the spaces the paragraph's end trimmed put back), or `None`.
pub fn paragraph_cut(src: &str) -> Option<(usize, Vec<MdNode>)> {
    // Link reference definitions can only open a paragraph: one whose first line starts with `[`
    // may hold them, and a definition left in the head (or cut in half) changes what a reference
    // on either side resolves to — found by the fuzz target. Such a paragraph is not cut.
    if src
        .lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim_start().starts_with('['))
    {
        return None;
    }
    let cut = last_cut(src)?;
    let head = &src[..cut];
    if !closed_inline(head) {
        return None;
    }
    let mut nodes = into_paragraph(parse(head)).unwrap_or_else(|n| n);
    let spaces = head.len() - head.trim_end_matches(' ').len();
    match nodes.last_mut() {
        Some(MdNode::Text(t)) => t.push_str(&head[cut - spaces..]),
        _ => nodes.push(MdNode::Text(head[cut - spaces..].to_string())),
    }
    Some((cut, nodes))
}

/// The last point in `src` after a run of spaces that follows a non-blank character and before an
/// alphabetic one, where the rest of the line holds no `|` (text after the cut whose first line has
/// a pipe can be a table's header row on its own where the whole line is not: `| a | b |` over
/// `|---` is a paragraph, `b |` over `|---` a table — found by the fuzz target).
fn last_cut(src: &str) -> Option<usize> {
    let mut i = src.len();
    while let Some(p) = src[..i].rfind(' ') {
        let at = p + 1;
        let before = src[..p].trim_end_matches(' ');
        let after = src[at..].chars().next();
        let line = src[at..].split('\n').next().unwrap_or_default();
        if after.is_some_and(char::is_alphabetic)
            && before
                .chars()
                .next_back()
                .is_some_and(|c| !c.is_whitespace())
            && !line.contains('|')
        {
            return Some(at);
        }
        i = p;
    }
    None
}

/// True if `src` is one paragraph whose code spans, links and inline HTML are all closed and that
/// has no left-over `*`, `_` or `~` run able to open emphasis (or strikethrough).
fn closed_inline(src: &str) -> bool {
    let mut depth = 0usize;
    let mut paragraphs = 0;
    for (ev, range) in Parser::new_ext(src, OPTIONS).into_offset_iter() {
        match ev {
            Event::Start(Tag::Paragraph) if depth == 0 => {
                paragraphs += 1;
                depth += 1;
            }
            Event::Start(_) if depth == 0 => return false,
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Text(_) if !leftovers_closed(src, range.start, range.end) => return false,
            Event::Text(_) => {}
            _ if depth == 0 => return false,
            _ => {}
        }
    }
    paragraphs == 1
}

/// True if the literal text `src[start..end]` holds no `[`, `<` or backtick (an opener a later
/// closer could complete) and no `*`, `_` or `~` run that can open (CommonMark's flanking rules).
fn leftovers_closed(src: &str, start: usize, end: usize) -> bool {
    let text = &src[start..end];
    if text.contains(['[', '<', '`']) {
        return false;
    }
    let mut i = start;
    while i < end {
        let c = src.as_bytes()[i];
        if !matches!(c, b'*' | b'_' | b'~') {
            i += 1;
            continue;
        }
        let run_end = src[i..]
            .find(|ch: char| ch as u32 != c as u32)
            .map_or(src.len(), |n| i + n);
        let prev = src[..i].chars().next_back();
        let next = src[run_end..].chars().next();
        // Where the parser's character classes are not certain here (non-ASCII spaces and
        // punctuation, a NUL it reads as U+FFFD), take the answer that lets the run open: the
        // cut is refused rather than risked. Before the run: broad classes; after it: ASCII only.
        let space_prev = prev.is_none_or(char::is_whitespace);
        let punct_prev = prev.is_some_and(|ch| !ch.is_alphanumeric() && !ch.is_whitespace());
        let space_next = next.is_none_or(|ch| ch.is_ascii_whitespace());
        let punct_next = next.is_some_and(|ch| ch.is_ascii_punctuation());
        let left = !space_next && (!punct_next || space_prev || punct_prev);
        let right = !space_prev && (!punct_prev || space_next || punct_next);
        let opens = if c == b'_' {
            left && (!right || punct_prev)
        } else {
            left
        };
        if opens {
            return false;
        }
        i = run_end;
    }
    true
}
