//! BlockSplit and the live paragraph against the whole text's rendering.

use super::*;
use crate::markdown::{joined_text, split_blocks};

/// Texts whose later lines change how earlier ones split: setext headings, lazy
/// continuation, lists gaining items after blank lines, fences, tables, quotes, HTML, indented
/// code after a paragraph.
const DOCS: &[&str] = &[
    "First paragraph\nstill first\n\nSecond\n===\n\n- one\n- two\n\n- three after a blank\n\n  continued item\n\nAfter the list\n",
    "```rust\nfn main() {}\n\n\nlet x = 1;\n```\n\nText `code` **bold**\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nend",
    "> quote\nlazy line\n\n> another\n\n    indented code\n\n    more code\npara\n---\n\n<div>\nhtml\n</div>\n\n1. a\n2. b\n\n   para in item\n3. c\n",
    "para\n    not code (lazy)\n\n* a\n\n  * nested\n\n\n* b\n\n[ref]: https://example.com\n\nuse [ref]\n\n~~~\nopen fence to the end\n\nstill code",
    "Heading\n-\n\ntext\n\n---\n\n# ATX\n\nline  \nbreak\n\n- [ ] task\n- [x] done\n\nfoot[^1]\n\n[^1]: note\n",
];

fn full(text: &str) -> Vec<(usize, String)> {
    split_blocks(text)
        .into_iter()
        .enumerate()
        .map(|(i, b)| (i, b.to_string()))
        .collect()
}

/// The blocks after an update (a live block's source read from the text).
fn got(split: &mut BlockSplit, text: &str) -> Vec<(usize, String)> {
    split.update(text, true);
    split.texts()
}

#[test]
fn a_growing_text_splits_as_the_whole_text_would_at_every_step() {
    for doc in DOCS {
        for step in [1, 2, 3, 7, 13] {
            let mut split = BlockSplit::default();
            let mut end = 0;
            while end < doc.len() {
                end = (end + step).min(doc.len());
                while !doc.is_char_boundary(end) {
                    end += 1;
                }
                let text = &doc[..end];
                assert_eq!(got(&mut split, text), full(text), "step {step}, {text:?}");
            }
        }
    }
}

/// Every text of three line fragments (block openers, continuations, blank lines), grown a
/// character at a time.
#[test]
fn every_three_fragment_text_splits_as_the_whole_text_would() {
    const PARTS: &[&str] = &[
        "para\n",
        "\n",
        "- item\n",
        "  cont\n",
        "    code\n",
        "> q\n",
        "===\n",
        "---\n",
        "```\n",
        "| a |\n|---|\n",
        "1. x\n",
        "<div>\n",
        "text",
        "* b\n",
        "[r]: /u\n",
    ];
    for a in PARTS {
        for b in PARTS {
            for c in PARTS {
                let doc = format!("{a}{b}{c}");
                let mut split = BlockSplit::default();
                for end in 1..=doc.len() {
                    let text = &doc[..end];
                    assert_eq!(got(&mut split, text), full(text), "{text:?}");
                }
            }
        }
    }
}

#[test]
fn kept_blocks_are_the_same_values_and_replaced_text_splits_again() {
    let mut split = BlockSplit::default();
    let a = split.update("one\n\ntwo\n\nthree\n\n- four", true).blocks;
    let b = split
        .update("one\n\ntwo\n\nthree\n\n- four five", true)
        .blocks;
    // The blocks before the last two were not split again: the same shared text.
    assert!(Arc::ptr_eq(&a[0].text, &b[0].text) && Arc::ptr_eq(&a[1].text, &b[1].text));
    assert_eq!(a[..2], b[..2]);
    assert_ne!(a[3], b[3]);
    // Not an append (a durable frame replaced the streamed text): split from the start.
    assert_eq!(got(&mut split, "one\n\nTWO"), full("one\n\nTWO"));
    // Not ready: the whole text, plain, one block; then markdown once ready.
    let d = split.update("one\n\nTWO", false).blocks;
    assert_eq!(d.len(), 1);
    assert!(!d[0].ready && &*d[0].text == "one\n\nTWO");
    assert_eq!(got(&mut split, "one\n\nTWO"), full("one\n\nTWO"));
}

/// What a text renders as, as one tree: each block parsed on its own, the live paragraph as a
/// `<p>` of its chunks and tail; adjacent text joined (the DOM shows it the same).
fn tree(r: &Rendered) -> Vec<MdNode> {
    let mut out = Vec::new();
    for b in &r.blocks {
        if b.live {
            let mut children = Vec::new();
            for c in &r.chunks {
                children.extend(c.nodes.iter().cloned());
            }
            children.extend(r.tail.nodes.iter().cloned());
            out.push(MdNode::El {
                tag: MdTag::P,
                attrs: vec![],
                children,
            });
        } else {
            out.extend(crate::markdown::parse(&b.text));
        }
    }
    joined_text(out)
}

/// The same text split and parsed whole, block by block.
fn whole(text: &str) -> Vec<MdNode> {
    joined_text(
        split_blocks(text)
            .into_iter()
            .flat_map(crate::markdown::parse)
            .collect(),
    )
}

/// Paragraphs as models write them, and the constructs that pair across a cut: emphasis opened
/// and closed later, snake_case, a lone `*`, unclosed code and links, entities, escapes, hard
/// and soft breaks, lines that start like blocks.
const PROSE: &[&str] = &[
    "The relay keeps every frame in **SQLite** so a reload shows `the same` history; see [the docs](https://example.com) and session_id values. ",
    "Start *emphasis that goes on for a while and closes much later* here. Then 2 * 3 is six and a_b_c stays. ",
    "**Note:** an opener *that never closes, followed by words and words and more words ",
    "`code that spans a long way before it closes` and [a link text that is long](https://x.y/z) done. ",
    "&amp; entities &copy; and \\*escaped\\* stars, <span>inline html</span> and <https://auto.link> too. ",
    "1990 was a year. 1.5 million people. #hashtag and -5 degrees, +1 from me, ~~struck~~ text. ",
    "line one  \nline two after a hard break\nand a soft one ",
    "[Docs](https://docs.example) explain it; ~tilde~ and _under_ too, plus __strong__ words. ",
    "A para that becomes a heading\n===\n\nthen more words and words and words ",
    "- a list item that goes on and on and on with **bold** and words\n- another ",
];

#[test]
fn a_growing_paragraph_renders_as_the_whole_text_would_at_every_step() {
    for i in 0..PROSE.len() {
        // Each fragment several times over (long enough to be cut), then the next one.
        let doc: String = (0..12).map(|k| PROSE[(i + k / 4) % PROSE.len()]).collect();
        for step in [1, 3, 7, 16] {
            let mut split = BlockSplit::default();
            let mut end = 0;
            let mut cut = false;
            while end < doc.len() {
                end = (end + step).min(doc.len());
                while !doc.is_char_boundary(end) {
                    end += 1;
                }
                let text = &doc[..end];
                let r = split.update(text, true);
                assert_eq!(tree(&r), whole(text), "doc {i}, step {step}, {text:?}");
                cut |= !r.chunks.is_empty();
            }
            if i == 0 {
                assert!(cut, "the plain paragraph is cut into chunks");
            }
        }
    }
}

#[test]
fn a_long_paragraph_parses_only_its_tail_again() {
    let mut split = BlockSplit::default();
    let mut text = String::new();
    let mut chunks = 0;
    let mut longest_tail = 0;
    while text.len() < 30_000 {
        text.push_str(PROSE[0]);
        let r = split.update(&text, true);
        assert!(
            r.blocks.last().is_some_and(|b| b.live),
            "the paragraph stays live"
        );
        chunks = r.chunks.len();
        let tail: usize = r
            .tail
            .nodes
            .iter()
            .map(|n| crate::markdown::plain_text(std::slice::from_ref(n)).len())
            .sum();
        longest_tail = longest_tail.max(tail);
    }
    assert!(chunks > 30, "{chunks} chunks");
    assert!(longest_tail < 1_000, "the tail stays short: {longest_tail}");
    // A blank line ends it: the paragraph is one ordinary block again, the new one live.
    text.push_str("\n\nNext");
    let r = split.update(&text, true);
    assert_eq!(r.blocks.len(), 2);
    assert!(!r.blocks[0].live && r.blocks[1].live);
    assert_eq!(tree(&r), whole(&text));
}

/// Eighty lines of one paragraph (soft breaks), as flow 09 streams them: grown by 49
/// characters, then a frame that skips ahead (a reconnect), then the whole text at once.
#[test]
fn a_paragraph_of_lines_renders_whole_however_it_grows() {
    let doc: String = (1..=80)
        .map(|i| format!("L{i:03} the quick brown fox jumps over the lazy dog\n"))
        .collect::<String>()
        + "E2E-LINES-DONE";
    for (step, skip) in [
        (49, None),
        (49, Some((400, 2_000))),
        (7, Some((1_000, 3_900))),
    ] {
        let mut split = BlockSplit::default();
        let mut end = 0;
        while end < doc.len() {
            end = match skip {
                Some((from, to)) if end >= from && end < to => to,
                _ => (end + step).min(doc.len()),
            };
            let text = &doc[..end];
            let r = split.update(text, true);
            assert_eq!(
                tree(&r),
                whole(text),
                "step {step}, skip {skip:?}, at {end}"
            );
        }
    }
}

/// A `|` that arrives on the first line after a cut, over a delimiter row, makes the text after
/// the cut a table on its own while the whole paragraph is not one (`| a | b |` has two header
/// cells, `|---` one): the live paragraph gives up its chunks and renders whole.
#[test]
fn a_pipe_after_a_cut_does_not_make_the_rest_a_table() {
    let words = "word ".repeat(120);
    let doc = format!("| a | {words}b |\n|---\nmore words after it");
    let mut split = BlockSplit::default();
    let mut cut = false;
    let mut end = 0;
    while end < doc.len() {
        end = (end + 5).min(doc.len());
        let text = &doc[..end];
        assert!(
            crate::markdown::into_paragraph(crate::markdown::parse(text)).is_ok(),
            "the whole stays a paragraph at {end}"
        );
        let r = split.update(text, true);
        cut |= !r.chunks.is_empty();
        assert_eq!(tree(&r), whole(text), "at {end}: {text:?}");
    }
    assert!(cut, "the long first line was cut before its pipe came");
}

/// The DOM keeps a chunk whose key it has seen: a key must never stand for other content,
/// also when the text is replaced (a durable frame, a reconnect) and cut again at the same places.
#[test]
fn a_chunk_key_never_stands_for_other_content() {
    let mut by_id: std::collections::HashMap<u64, Vec<MdNode>> = Default::default();
    let mut by_start: std::collections::HashMap<usize, Vec<MdNode>> = Default::default();
    let mut start_reused = false;
    let mut split = BlockSplit::default();
    let a = PROSE[0].repeat(20);
    let b = PROSE[1].repeat(20);
    for text in [&a[..1_000], &a[..], &b[..700], &a[..900], &b[..]] {
        for c in split.update(text, true).chunks {
            let nodes = (*c.nodes).clone();
            assert_eq!(
                by_id.entry(c.id).or_insert_with(|| nodes.clone()),
                &nodes,
                "key {} reused",
                c.id
            );
            start_reused |= by_start.entry(c.start).or_insert_with(|| nodes.clone()) != &nodes;
        }
    }
    // The case the key is for: the same place cut again holds other text.
    assert!(start_reused, "a place was cut again with other content");
}

#[test]
fn a_last_line_is_settled_once_nothing_can_change_what_it_is() {
    for line in [
        "word",
        "**Note:** x",
        "1990 ",
        "1.5 m",
        "#tag",
        "`c` d",
        "-5",
        "[a](b) c",
        "| a |",
        "==x",
        "é",
    ] {
        assert!(settled(line), "{line:?}");
    }
    for line in [
        "", " x", "#", "# h", "1", "1.", "1. x", "- x", "*", "**", "***", "---", "--", "=", "==",
        "```", "``", "> q", "<div", "[a]", "[a]: /u", "|-", ":-:", "\tx",
    ] {
        assert!(!settled(line), "{line:?}");
    }
}
