//! Inert markdown rendering.

use std::sync::Arc;

use leptos::prelude::*;

use crate::lazy::{self, Part};
use crate::markdown::{MdNode, MdTag};

/// Renders markdown as DOM built from a fixed set of elements (see [`crate::markdown`]): raw HTML
/// shows as text, unsafe links are plain text, images show their alt text. Never uses `inner_html`.
/// Top-level blocks are keyed by their position and source, so while text streams in only the block
/// that changed (the last one) is rebuilt — and only the text's last blocks are split again
/// ([`BlockSplit`]): a frame's cost follows what arrived, not the message's length. Until the
/// markdown part is loaded ([`crate::lazy`], split build only) the source shows as plain text, then
/// re-renders as markdown.
#[component]
pub fn Markdown(
    /// The markdown source (a plain `String` works too).
    #[prop(into)]
    text: Signal<String>,
) -> impl IntoView {
    let split = StoredValue::new(BlockSplit::default());
    let blocks = Memo::new(move |_| {
        let ready = lazy::ready(Part::Markdown);
        text.with(|t| {
            split
                .try_update_value(|s| s.update(t, ready))
                .unwrap_or_default()
        })
    });
    view! {
        <div class="md">
            <For each=move || blocks.get() key=|b| (b.ready, b.index, b.hash) let:b>
                {match b.ready.then(|| lazy::md_parse(&b.text)).flatten() {
                    Some(nodes) => render_nodes(nodes).into_any(),
                    None => view! { <p class="md-plain">{b.text.to_string()}</p> }.into_any(),
                }}
            </For>
        </div>
    }
}

/// One top-level block of a markdown text: its position, its source and a hash of it (the key).
/// Compared field by field, the hash before the source (a kept block's shared `Arc<str>` compares
/// by pointer first).
#[derive(Clone, Debug, PartialEq)]
pub struct MdBlock {
    /// False while the markdown part is not loaded: the whole text, shown plain.
    pub ready: bool,
    /// Position among the text's blocks.
    pub index: usize,
    /// Hash of the source (with `index` and `ready`, the block's key).
    pub hash: u64,
    /// The block's source.
    pub text: Arc<str>,
    /// Where it starts in the text.
    start: usize,
}

/// The last split of a text into top-level blocks. When the text grew at its end (streaming), the
/// blocks before its last two are kept and only the rest is split again: appending cannot change a
/// block that a later block already followed (CommonMark closes it), while the last one (a
/// paragraph that becomes a setext heading, a list that gains an item, an open code fence) and the
/// one before it are split again. Anything else — replaced text, the part just loaded — splits the
/// whole text.
#[derive(Default)]
pub struct BlockSplit {
    /// The text of the last split.
    source: String,
    ready: bool,
    blocks: Vec<MdBlock>,
}

impl BlockSplit {
    /// The blocks of `text` (one plain block while `ready` is false, or the markdown part is not
    /// loaded).
    pub fn update(&mut self, text: &str, ready: bool) -> Vec<MdBlock> {
        let appended = ready && self.ready && text.starts_with(self.source.as_str());
        if appended && text.len() == self.source.len() {
            return self.blocks.clone();
        }
        let mut keep = if appended {
            self.blocks.len().saturating_sub(2)
        } else {
            0
        };
        // Split again from the start of a line (an indented code block's range starts after its
        // indentation, which the block before it holds).
        while keep > 0 && !text[..self.blocks[keep].start].ends_with('\n') {
            keep -= 1;
        }
        self.blocks.truncate(keep);
        let from = self.blocks.last().map_or(0, |b| b.start + b.text.len());
        let tail = match ready.then(|| lazy::md_blocks(&text[from..])).flatten() {
            Some(tail) => tail,
            None => {
                // Shown plain until the markdown part is in: split again then.
                self.source.clear();
                self.ready = false;
                self.blocks.clear();
                return vec![block(false, 0, 0, text)];
            }
        };
        let mut start = from;
        for source in tail {
            let b = block(true, self.blocks.len(), start, &source);
            start += source.len();
            self.blocks.push(b);
        }
        if appended {
            self.source.push_str(&text[self.source.len()..]);
        } else {
            self.source = text.to_owned();
        }
        self.ready = true;
        self.blocks.clone()
    }
}

fn block(ready: bool, index: usize, start: usize, text: &str) -> MdBlock {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    MdBlock {
        ready,
        index,
        hash: h.finish(),
        text: Arc::from(text),
        start,
    }
}

/// Renders a parsed tree.
pub fn render_nodes(nodes: Vec<MdNode>) -> Vec<AnyView> {
    nodes.into_iter().map(render_node).collect()
}

fn render_node(node: MdNode) -> AnyView {
    let (tag, attrs, children) = match node {
        MdNode::Text(t) => return t.into_any(),
        MdNode::El {
            tag,
            attrs,
            children,
        } => (tag, attrs, children),
    };
    let a = |k: &str| attrs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
    let c = render_nodes(children);
    match tag {
        MdTag::P => view! { <p class=a("class")>{c}</p> }.into_any(),
        MdTag::H(1) => view! { <h1>{c}</h1> }.into_any(),
        MdTag::H(2) => view! { <h2>{c}</h2> }.into_any(),
        MdTag::H(3) => view! { <h3>{c}</h3> }.into_any(),
        MdTag::H(4) => view! { <h4>{c}</h4> }.into_any(),
        MdTag::H(5) => view! { <h5>{c}</h5> }.into_any(),
        MdTag::H(_) => view! { <h6>{c}</h6> }.into_any(),
        MdTag::Blockquote => view! { <blockquote>{c}</blockquote> }.into_any(),
        MdTag::Pre => view! { <pre class="code">{c}</pre> }.into_any(),
        MdTag::Code => view! { <code class=a("class")>{c}</code> }.into_any(),
        MdTag::Ul => view! { <ul>{c}</ul> }.into_any(),
        MdTag::Ol => view! { <ol start=a("start")>{c}</ol> }.into_any(),
        MdTag::Li => view! { <li>{c}</li> }.into_any(),
        MdTag::Em => view! { <em>{c}</em> }.into_any(),
        MdTag::Strong => view! { <strong>{c}</strong> }.into_any(),
        MdTag::Del => view! { <del>{c}</del> }.into_any(),
        MdTag::A => view! {
            <a href=a("href") rel=a("rel") target=a("target") title=a("title")>{c}</a>
        }
        .into_any(),
        MdTag::Span => view! {
            <span class=a("class") title=a("title") data-unsafe-href=a("data-unsafe-href")>{c}</span>
        }
        .into_any(),
        MdTag::Table => view! { <div class="table-wrap"><table>{c}</table></div> }.into_any(),
        MdTag::Thead => view! { <thead>{c}</thead> }.into_any(),
        MdTag::Tbody => view! { <tbody>{c}</tbody> }.into_any(),
        MdTag::Tr => view! { <tr>{c}</tr> }.into_any(),
        MdTag::Th => view! { <th>{c}</th> }.into_any(),
        MdTag::Td => view! { <td>{c}</td> }.into_any(),
        MdTag::Hr => view! { <hr /> }.into_any(),
        MdTag::Br => view! { <br /> }.into_any(),
        MdTag::Sup => view! { <sup>{c}</sup> }.into_any(),
        MdTag::Sub => view! { <sub>{c}</sub> }.into_any(),
        MdTag::Div => view! { <div class=a("class")>{c}</div> }.into_any(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::split_blocks;

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

    fn got(blocks: &[MdBlock]) -> Vec<(usize, String)> {
        blocks
            .iter()
            .map(|b| (b.index, b.text.to_string()))
            .collect()
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
                    assert_eq!(
                        got(&split.update(text, true)),
                        full(text),
                        "step {step}, {text:?}"
                    );
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
                        assert_eq!(got(&split.update(text, true)), full(text), "{text:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn kept_blocks_are_the_same_values_and_replaced_text_splits_again() {
        let mut split = BlockSplit::default();
        let a = split.update("one\n\ntwo\n\nthree\n\nfour", true);
        let b = split.update("one\n\ntwo\n\nthree\n\nfour five", true);
        // The blocks before the last two were not split again: the same shared text.
        assert!(Arc::ptr_eq(&a[0].text, &b[0].text) && Arc::ptr_eq(&a[1].text, &b[1].text));
        assert_eq!(a[..2], b[..2]);
        assert_ne!(a[3], b[3]);
        // Not an append (a durable frame replaced the streamed text): split from the start.
        let c = split.update("one\n\nTWO", true);
        assert_eq!(got(&c), full("one\n\nTWO"));
        // Not ready: the whole text, plain, one block; then markdown once ready.
        let d = split.update("one\n\nTWO", false);
        assert_eq!(d.len(), 1);
        assert!(!d[0].ready && &*d[0].text == "one\n\nTWO");
        assert_eq!(got(&split.update("one\n\nTWO", true)), full("one\n\nTWO"));
    }
}
