//! Markdown to an inert tree.
//!
//! pulldown-cmark events are turned into a small tree of [`MdNode`]s built from a fixed set of
//! tags. Nothing the model writes can become markup: raw HTML (block or inline) becomes text, images
//! become their alt text, and link targets pass only when their scheme is on an allowlist
//! (`http`, `https`, `mailto`, or a relative / fragment URL). The components turn the tree into DOM
//! nodes with Leptos builders; no `inner_html` anywhere.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// The element types the renderer can produce. Anything else in the input maps onto one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MdTag {
    /// `<p>`
    P,
    /// `<h1>`…`<h6>`
    H(u8),
    /// `<blockquote>`
    Blockquote,
    /// `<pre>` (with a `<code>` child)
    Pre,
    /// `<code>`
    Code,
    /// `<ul>`
    Ul,
    /// `<ol>`
    Ol,
    /// `<li>`
    Li,
    /// `<em>`
    Em,
    /// `<strong>`
    Strong,
    /// `<del>`
    Del,
    /// `<a>` (only with a safe href)
    A,
    /// `<span>` (used for unsafe links, images, HTML shown as text)
    Span,
    /// `<table>`
    Table,
    /// `<thead>`
    Thead,
    /// `<tbody>`
    Tbody,
    /// `<tr>`
    Tr,
    /// `<th>`
    Th,
    /// `<td>`
    Td,
    /// `<hr>`
    Hr,
    /// `<br>`
    Br,
    /// `<sup>`
    Sup,
    /// `<sub>`
    Sub,
    /// `<div>` (footnotes, definition lists, metadata)
    Div,
}

/// A node of the rendered tree.
#[derive(Clone, Debug, PartialEq)]
pub enum MdNode {
    /// Text (always shown as text).
    Text(String),
    /// An element from the fixed set, with attributes from a fixed set of names.
    El {
        /// Tag.
        tag: MdTag,
        /// Attributes: only `href`, `title`, `class`, `start`, `rel`, `target`, `data-unsafe-href`.
        attrs: Vec<(&'static str, String)>,
        /// Children.
        children: Vec<MdNode>,
    },
}

/// True if `url` may be a link target: `http:`, `https:`, `mailto:`, or no scheme at all
/// (relative or `#fragment`). Browsers ignore ASCII tab/newline inside a scheme and are
/// case-insensitive about it, so those are normalised before checking.
pub fn safe_url(url: &str) -> bool {
    let cleaned: String = url
        .trim_matches(|c: char| c.is_ascii_whitespace() || c.is_control())
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let lower = cleaned.to_ascii_lowercase();
    if lower.chars().any(|c| c.is_control()) {
        return false;
    }
    // Scheme = everything before the first ':' if that comes before any '/', '?' or '#'.
    let scheme_end = lower.find(':');
    let path_start = lower.find(['/', '?', '#']);
    match scheme_end {
        None => true,
        Some(i) if path_start.is_some_and(|p| p < i) => true,
        Some(i) => matches!(&lower[..i], "http" | "https" | "mailto"),
    }
}

fn code_class(lang: &str) -> Option<String> {
    let lang: String = lang
        .split([' ', ',', '{'])
        .next()
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '.' | '#'))
        .take(32)
        .collect();
    (!lang.is_empty()).then(|| format!("language-{lang}"))
}

struct Frame {
    tag: MdTag,
    attrs: Vec<(&'static str, String)>,
    children: Vec<MdNode>,
}

impl Frame {
    /// An element opened, with no children yet.
    fn open(tag: MdTag, attrs: Vec<(&'static str, String)>) -> Self {
        Frame {
            tag,
            attrs,
            children: vec![],
        }
    }
}

/// The CommonMark extensions the console renders.
const OPTIONS: Options = Options::ENABLE_TABLES
    .union(Options::ENABLE_STRIKETHROUGH)
    .union(Options::ENABLE_TASKLISTS)
    .union(Options::ENABLE_FOOTNOTES);

// The paragraph cut (streaming). By `#[path]`, so the fuzz crate, which includes this file by
// path, finds it too.
#[path = "markdown/cut.rs"]
mod cut;
pub use cut::paragraph_cut;

/// Parses markdown into the inert tree.
pub fn parse(markdown: &str) -> Vec<MdNode> {
    let opts = OPTIONS;
    let mut stack: Vec<Frame> = vec![Frame::open(MdTag::Div, vec![])];
    let mut in_thead = false;
    let mut tbody_open = false;
    for ev in Parser::new_ext(markdown, opts) {
        match ev {
            Event::Start(tag) => {
                let (t, attrs, image): (MdTag, Vec<(&'static str, String)>, bool) = match tag {
                    Tag::Paragraph => (MdTag::P, vec![], false),
                    Tag::Heading { level, .. } => (MdTag::H(heading(level)), vec![], false),
                    Tag::BlockQuote(_) => (MdTag::Blockquote, vec![], false),
                    Tag::CodeBlock(kind) => {
                        let class = match kind {
                            CodeBlockKind::Fenced(lang) => code_class(&lang),
                            CodeBlockKind::Indented => None,
                        };
                        stack.push(Frame::open(MdTag::Pre, vec![]));
                        let attrs = class.map(|c| vec![("class", c)]).unwrap_or_default();
                        (MdTag::Code, attrs, false)
                    }
                    Tag::HtmlBlock => (MdTag::P, vec![("class", "raw-html".to_string())], false),
                    Tag::List(Some(start)) => {
                        let attrs = if start == 1 {
                            vec![]
                        } else {
                            vec![("start", start.to_string())]
                        };
                        (MdTag::Ol, attrs, false)
                    }
                    Tag::List(None) => (MdTag::Ul, vec![], false),
                    Tag::Item => (MdTag::Li, vec![], false),
                    Tag::FootnoteDefinition(label) => {
                        let f = Frame {
                            tag: MdTag::Div,
                            attrs: vec![("class", "footnote".to_string())],
                            children: vec![MdNode::Text(format!("[{label}] "))],
                        };
                        stack.push(f);
                        continue;
                    }
                    Tag::DefinitionList
                    | Tag::DefinitionListTitle
                    | Tag::DefinitionListDefinition => (MdTag::Div, vec![], false),
                    Tag::Table(_) => (MdTag::Table, vec![], false),
                    Tag::TableHead => {
                        in_thead = true;
                        stack.push(Frame::open(MdTag::Thead, vec![]));
                        (MdTag::Tr, vec![], false)
                    }
                    Tag::TableRow => {
                        if !tbody_open {
                            tbody_open = true;
                            stack.push(Frame::open(MdTag::Tbody, vec![]));
                        }
                        (MdTag::Tr, vec![], false)
                    }
                    Tag::TableCell => (if in_thead { MdTag::Th } else { MdTag::Td }, vec![], false),
                    Tag::Emphasis => (MdTag::Em, vec![], false),
                    Tag::Strong => (MdTag::Strong, vec![], false),
                    Tag::Strikethrough => (MdTag::Del, vec![], false),
                    Tag::Superscript => (MdTag::Sup, vec![], false),
                    Tag::Subscript => (MdTag::Sub, vec![], false),
                    Tag::Link {
                        dest_url, title, ..
                    } => {
                        if safe_url(&dest_url) {
                            let mut attrs = vec![
                                ("href", dest_url.to_string()),
                                ("rel", "noopener noreferrer nofollow".to_string()),
                                ("target", "_blank".to_string()),
                            ];
                            if !title.is_empty() {
                                attrs.push(("title", title.to_string()));
                            }
                            (MdTag::A, attrs, false)
                        } else {
                            let attrs = vec![
                                ("class", "unsafe-link".to_string()),
                                ("data-unsafe-href", dest_url.chars().take(200).collect()),
                            ];
                            (MdTag::Span, attrs, false)
                        }
                    }
                    Tag::Image { dest_url, .. } => {
                        let attrs = vec![
                            ("class", "md-image".to_string()),
                            ("title", dest_url.chars().take(200).collect()),
                        ];
                        (MdTag::Span, attrs, true)
                    }
                    Tag::MetadataBlock(_) => (MdTag::Pre, vec![], false),
                };
                stack.push(Frame::open(t, attrs));
                if image {
                    push(&mut stack, MdNode::Text("🖼 ".into()));
                }
            }
            Event::End(end) => match end {
                TagEnd::Table => {
                    if tbody_open {
                        tbody_open = false;
                        close(&mut stack);
                    }
                    close(&mut stack);
                }
                TagEnd::CodeBlock => {
                    close(&mut stack);
                    close(&mut stack);
                }
                TagEnd::TableHead => {
                    in_thead = false;
                    close(&mut stack);
                    close(&mut stack);
                }
                _ => close(&mut stack),
            },
            Event::Text(t) => push(&mut stack, MdNode::Text(t.into_string())),
            Event::Code(t) => push(
                &mut stack,
                MdNode::El {
                    tag: MdTag::Code,
                    attrs: vec![],
                    children: vec![MdNode::Text(t.into_string())],
                },
            ),
            Event::InlineMath(t) | Event::DisplayMath(t) => {
                push(&mut stack, MdNode::Text(t.into_string()))
            }
            // Raw HTML is shown as the text it is.
            Event::Html(t) | Event::InlineHtml(t) => {
                push(&mut stack, MdNode::Text(t.into_string()))
            }
            Event::FootnoteReference(label) => push(
                &mut stack,
                MdNode::El {
                    tag: MdTag::Sup,
                    attrs: vec![],
                    children: vec![MdNode::Text(format!("[{label}]"))],
                },
            ),
            Event::SoftBreak => push(&mut stack, MdNode::Text("\n".into())),
            Event::HardBreak => push(
                &mut stack,
                MdNode::El {
                    tag: MdTag::Br,
                    attrs: vec![],
                    children: vec![],
                },
            ),
            Event::Rule => push(
                &mut stack,
                MdNode::El {
                    tag: MdTag::Hr,
                    attrs: vec![],
                    children: vec![],
                },
            ),
            Event::TaskListMarker(done) => push(
                &mut stack,
                MdNode::Text(if done { "☑ " } else { "☐ " }.into()),
            ),
        }
    }
    while stack.len() > 1 {
        close(&mut stack);
    }
    stack.pop().map(|f| f.children).unwrap_or_default()
}

fn heading(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

fn push(stack: &mut [Frame], node: MdNode) {
    if let Some(top) = stack.last_mut() {
        // Merge adjacent text to keep the tree (and the DOM) small.
        if let (MdNode::Text(new), Some(MdNode::Text(prev))) = (&node, top.children.last_mut()) {
            prev.push_str(new);
            return;
        }
        top.children.push(node);
    }
}

fn close(stack: &mut Vec<Frame>) {
    if stack.len() <= 1 {
        return;
    }
    let f = stack.pop().expect("len > 1");
    let node = MdNode::El {
        tag: f.tag,
        attrs: f.attrs,
        children: f.children,
    };
    push(stack, node);
}

/// Splits markdown into its top-level blocks (paragraphs, headings, lists, code fences, tables …),
/// as consecutive slices of the source. Rendering each block on its own gives the same result, so
/// while a message streams only the (changing) last block needs re-rendering.
pub fn split_blocks(markdown: &str) -> Vec<&str> {
    let opts = OPTIONS;
    let mut starts = Vec::new();
    let mut depth = 0usize;
    for (ev, range) in Parser::new_ext(markdown, opts).into_offset_iter() {
        match ev {
            Event::Start(_) => {
                if depth == 0 {
                    starts.push(range.start);
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            _ if depth == 0 => starts.push(range.start),
            _ => {}
        }
    }
    // Whatever precedes the first block (blank lines) belongs to it.
    match starts.first_mut() {
        Some(first) => *first = 0,
        None if !markdown.is_empty() => starts.push(0),
        None => {}
    }
    starts.dedup();
    let mut out = Vec::with_capacity(starts.len());
    for (i, &s) in starts.iter().enumerate() {
        let e = starts.get(i + 1).copied().unwrap_or(markdown.len());
        if s < e {
            out.push(&markdown[s..e]);
        }
    }
    out
}

/// The children of a tree that is one `<p>` (`Err` with the tree as it was otherwise).
pub fn into_paragraph(mut nodes: Vec<MdNode>) -> Result<Vec<MdNode>, Vec<MdNode>> {
    if let [
        MdNode::El {
            tag: MdTag::P,
            attrs,
            ..
        },
    ] = nodes.as_slice()
        && attrs.is_empty()
        && let Some(MdNode::El { children, .. }) = nodes.pop()
    {
        return Ok(children);
    }
    Err(nodes)
}

/// `nodes` with adjacent text nodes joined, recursively: two trees the DOM shows the same compare
/// equal (for tests and the fuzz target comparing a paragraph rendered in parts with it whole).
pub fn joined_text(nodes: Vec<MdNode>) -> Vec<MdNode> {
    let mut out: Vec<MdNode> = Vec::new();
    for n in nodes {
        let n = match n {
            MdNode::El {
                tag,
                attrs,
                children,
            } => MdNode::El {
                tag,
                attrs,
                children: joined_text(children),
            },
            t => t,
        };
        match (out.last_mut(), n) {
            (Some(MdNode::Text(prev)), MdNode::Text(t)) => prev.push_str(&t),
            (_, n) => out.push(n),
        }
    }
    out
}

/// Plain text of a tree (for tests and accessibility labels).
pub fn plain_text(nodes: &[MdNode]) -> String {
    let mut out = String::new();
    fn walk(n: &MdNode, out: &mut String) {
        match n {
            MdNode::Text(t) => out.push_str(t),
            MdNode::El { children, .. } => children.iter().for_each(|c| walk(c, out)),
        }
    }
    nodes.iter().for_each(|n| walk(n, &mut out));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(nodes: &'a [MdNode], tag: MdTag, out: &mut Vec<&'a MdNode>) {
        for n in nodes {
            if let MdNode::El {
                tag: t, children, ..
            } = n
            {
                if *t == tag {
                    out.push(n);
                }
                find(children, tag, out);
            }
        }
    }

    fn all(nodes: &[MdNode], tag: MdTag) -> Vec<&MdNode> {
        let mut v = Vec::new();
        find(nodes, tag, &mut v);
        v
    }

    /// Found by the fuzz target: a `*` before a NUL (read as U+FFFD) can open emphasis that a
    /// later `*` closes, so no cut may leave it behind.
    #[test]
    fn no_cut_leaves_an_opener_before_a_character_the_parser_reads_otherwise() {
        let text = "a2e\u{1a}\0\0\0\0\u{7}\0\0\0\0\0\0\0hasi*\0me\u{4}\0phasiThe rels\n";
        if let Some((cut, mut head)) = paragraph_cut(text) {
            let grown = format!("{text} x* y");
            head.extend(into_paragraph(parse(&grown[cut..])).unwrap_or_else(|n| n));
            assert_eq!(
                joined_text(head),
                joined_text(into_paragraph(parse(&grown)).unwrap_or_else(|n| n))
            );
        }
        for opener in ["*\u{a0}x", "_\u{2003}x", "*\u{fffd}x", "*\u{3000}x"] {
            let text = format!("word {opener} more words here");
            assert!(
                paragraph_cut(&text).is_none_or(|(cut, _)| cut < 5),
                "{text:?} cut after its opener"
            );
        }
    }

    /// `text` is one paragraph as a whole, and no cut is taken in it.
    #[track_caller]
    fn assert_whole_and_uncut(text: &str) {
        assert!(
            into_paragraph(parse(text)).is_ok(),
            "the whole is a paragraph"
        );
        assert_eq!(paragraph_cut(text), None);
    }

    /// Found by the fuzz target: text after a cut whose first line holds a `|` can be a table on
    /// its own (`b |` over `|---`) where the whole paragraph is not (`| a | b |` over `|---`: two
    /// header cells, one delimiter).
    #[test]
    fn no_cut_leaves_a_pipe_on_the_line_after_it() {
        let text = "| a | b |\n|---\r\0\0\0\0\0\0\0\0\0\0\u{1}\n";
        assert_whole_and_uncut(text);
        assert!(
            into_paragraph(parse(&text[6..])).is_err(),
            "cut at 6, the rest is a table"
        );
        // Elsewhere in the same paragraph a cut is still taken: after the pipes' line.
        let text = "| a | b |\n|--- and some more words here";
        let (cut, _) = paragraph_cut(text).unwrap();
        assert!(cut > text.find('\n').unwrap(), "{cut}");
    }

    /// Found by the fuzz target: a paragraph that opens with link reference definitions is not
    /// cut (a definition cut in half becomes text and a link in the head; a reference after the
    /// cut would not find a definition before it).
    #[test]
    fn no_cut_in_a_paragraph_that_may_open_with_definitions() {
        let text = "\t\t\n\n[ref]: http:/.\t\t\t\t\t\t\n[ref]: http:/.\t\t\t\t\t\t\t\r\t\t\t\tf]:\u{1}\0\0f\t\t\t\t\t\t\t\t\r\t\t\t\t\t";
        assert_whole_and_uncut(text);
        let text = "[ref]: https://example.com\nwords that use [ref] and go on for a while here";
        assert_eq!(paragraph_cut(text), None);
        // Any other paragraph is still cut.
        assert!(paragraph_cut("words that go on and on for a while here").is_some());
    }

    #[test]
    fn raw_html_is_text() {
        let md = "<script>alert(1)</script>\n\nhi <img src=x onerror=alert(1)> <b>bold</b>";
        let tree = parse(md);
        let text = plain_text(&tree);
        assert!(text.contains("<script>alert(1)</script>"), "{text}");
        assert!(text.contains("<img src=x onerror=alert(1)>"), "{text}");
        assert!(all(&tree, MdTag::Strong).is_empty());
    }

    #[test]
    fn unsafe_links_are_not_links() {
        for url in [
            "javascript:alert(1)",
            "JaVaScRiPt:alert(1)",
            " javascript:alert(1)",
            "java\tscript:alert(1)",
            "data:text/html;base64,PHNjcmlwdD4=",
            "vbscript:msgbox(1)",
            "file:///etc/passwd",
        ] {
            assert!(!safe_url(url), "{url:?} passed");
            let tree = parse(&format!("[click](<{url}>)"));
            assert!(
                all(&tree, MdTag::A).is_empty(),
                "{url:?} became a link: {tree:?}"
            );
            assert_eq!(plain_text(&tree).trim(), "click");
        }
        for url in [
            "https://example.com/a?b#c",
            "http://x",
            "mailto:a@b.c",
            "/relative",
            "#frag",
            "a/b:c",
        ] {
            assert!(safe_url(url), "{url:?} refused");
        }
        let tree = parse("[ok](https://example.com)");
        let a = all(&tree, MdTag::A);
        assert_eq!(a.len(), 1);
        if let MdNode::El { attrs, .. } = a[0] {
            assert!(attrs.contains(&("href", "https://example.com".to_string())));
            assert!(
                attrs
                    .iter()
                    .any(|(k, v)| *k == "rel" && v.contains("noopener"))
            );
        }
    }

    #[test]
    fn images_are_alt_text_only() {
        let tree = parse("![a cat](https://tracker.example/pixel.gif)");
        assert!(plain_text(&tree).contains("a cat"));
        assert!(all(&tree, MdTag::A).is_empty());
    }

    #[test]
    fn structure_headings_lists_tables_code() {
        let md = "# Title\n\n- a\n- b\n\n1. x\n\n| h1 | h2 |\n|----|----|\n| c1 | c2 |\n| d1 | d2 |\n\n```rust\nfn main() {}\n```\n";
        let tree = parse(md);
        assert_eq!(all(&tree, MdTag::H(1)).len(), 1);
        assert_eq!(all(&tree, MdTag::Ul).len(), 1);
        assert_eq!(all(&tree, MdTag::Li).len(), 3);
        assert_eq!(all(&tree, MdTag::Table).len(), 1);
        assert_eq!(all(&tree, MdTag::Th).len(), 2);
        assert_eq!(all(&tree, MdTag::Td).len(), 4);
        assert_eq!(all(&tree, MdTag::Tbody).len(), 1);
        assert_eq!(all(&tree, MdTag::Thead).len(), 1);
        let table = all(&tree, MdTag::Table)[0];
        assert_eq!(
            all(std::slice::from_ref(table), MdTag::Tbody).len(),
            1,
            "tbody inside the table"
        );
        let pre = all(&tree, MdTag::Pre);
        assert_eq!(pre.len(), 1);
        let code = all(std::slice::from_ref(pre[0]), MdTag::Code);
        match code[0] {
            MdNode::El { attrs, .. } => {
                assert_eq!(attrs, &vec![("class", "language-rust".to_string())])
            }
            _ => unreachable!(),
        }
        assert!(plain_text(&tree).contains("fn main() {}"));
    }

    #[test]
    fn hostile_language_names_are_cleaned() {
        let tree = parse("```js\" onload=\"x\ncode\n```");
        let code = all(&tree, MdTag::Code);
        match code[0] {
            MdNode::El { attrs, .. } => assert_eq!(attrs[0].1, "language-js"),
            _ => unreachable!(),
        }
    }

    #[test]
    fn blocks_render_like_the_whole() {
        let md = "# T\n\npara *one*\ncontinued\n\n- a\n- b\n\n```rs\ncode\n\nmore\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quote\n\n---\n\n<div>html</div>\n\nlast";
        let blocks = split_blocks(md);
        assert_eq!(blocks.concat(), md, "the blocks are the whole source");
        assert_eq!(blocks.len(), 9, "{blocks:?}");
        let whole = parse(md);
        let pieces: Vec<MdNode> = blocks.iter().flat_map(|b| parse(b)).collect();
        assert_eq!(plain_text(&whole), plain_text(&pieces));
        assert_eq!(whole.len(), pieces.len());
        assert_eq!(split_blocks(""), Vec::<&str>::new());
        assert_eq!(split_blocks("  \n\nx"), vec!["  \n\nx"]);
    }

    #[test]
    fn unclosed_streaming_markdown_still_renders() {
        let tree = parse("Here is code:\n```py\nprint(1");
        assert!(plain_text(&tree).contains("print(1"));
        let tree = parse("**bold and *it");
        assert!(plain_text(&tree).contains("bold and"));
    }
}
