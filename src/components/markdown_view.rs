//! Inert markdown rendering.

use leptos::prelude::*;

use crate::lazy::{self, Part};
use crate::markdown::{MdNode, MdTag};

/// Renders markdown as DOM built from a fixed set of elements (see [`crate::markdown`]): raw HTML
/// shows as text, unsafe links are plain text, images show their alt text. Never uses `inner_html`.
/// Top-level blocks are keyed by their source, so while text streams in only the block that changed
/// (the last one) is rebuilt. Until the markdown part is loaded ([`crate::lazy`], split build only)
/// the source shows as plain text, then re-renders as markdown.
#[component]
pub fn Markdown(
    /// The markdown source (a plain `String` works too).
    #[prop(into)]
    text: Signal<String>,
) -> impl IntoView {
    let blocks = Memo::new(move |_| {
        let ready = lazy::ready(Part::Markdown);
        text.with(|t| {
            let blocks = ready.then(|| lazy::md_blocks(t)).flatten();
            let ready = blocks.is_some();
            blocks
                .unwrap_or_else(|| vec![t.clone()])
                .into_iter()
                .enumerate()
                .map(|(i, b)| (ready, i, b))
                .collect::<Vec<_>>()
        })
    });
    view! {
        <div class="md">
            <For each=move || blocks.get() key=|b| b.clone() let:b>
                {match b.0.then(|| lazy::md_parse(&b.2)).flatten() {
                    Some(nodes) => render_nodes(nodes).into_any(),
                    None => view! { <p class="md-plain">{b.2}</p> }.into_any(),
                }}
            </For>
        </div>
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
