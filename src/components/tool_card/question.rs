//! AskUserQuestion tool body.

use leptos::prelude::*;
use serde_json::Value;

use crate::format::field;

/// The questions asked (answers show in the result).
#[component]
pub fn QuestionBody(
    /// Tool input.
    input: Value,
) -> impl IntoView {
    let questions: Vec<String> = input
        .get("questions")
        .and_then(Value::as_array)
        .map(|q| q.iter().map(|x| field(x, "question").to_string()).collect())
        .unwrap_or_default();
    view! { <ul class="question-list">{questions.into_iter().map(|q| view! { <li>{q}</li> }).collect_view()}</ul> }
}
