//! AskUserQuestion tool body.

use leptos::prelude::*;
use serde_json::Value;

use crate::format::{field, items};

/// The questions asked (answers show in the result).
#[component]
pub fn QuestionBody(
    /// Tool input.
    input: Value,
) -> impl IntoView {
    let questions: Vec<String> = items(&input, "questions")
        .iter()
        .map(|x| field(x, "question").to_string())
        .collect();
    view! { <ul class="question-list">{questions.into_iter().map(|q| view! { <li>{q}</li> }).collect_view()}</ul> }
}
