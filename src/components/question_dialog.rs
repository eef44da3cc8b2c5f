//! The AskUserQuestion dialog.

use bridge_protocol::build;
use leptos::prelude::*;
use serde_json::Value;

use crate::components::prompt_dock::DialogFrame;
use crate::format::{field, flag, items};
use crate::state::Prompt;
use crate::store::Store;

/// One question of `AskUserQuestion`.
#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    /// The question.
    pub question: String,
    /// Short header.
    pub header: String,
    /// (label, description) options.
    pub options: Vec<(String, String)>,
    /// Several answers allowed.
    pub multi: bool,
}

/// Reads the questions of an `AskUserQuestion` input.
pub fn questions(input: &Value) -> Vec<Question> {
    items(input, "questions")
        .iter()
        .map(|q| Question {
            question: field(q, "question").to_string(),
            header: field(q, "header").to_string(),
            options: items(q, "options")
                .iter()
                .map(|x| {
                    (
                        field(x, "label").to_string(),
                        field(x, "description").to_string(),
                    )
                })
                .collect(),
            multi: flag(q, "multiSelect"),
        })
        .collect()
}

/// The `updatedInput` carrying the answers: the input plus `answers: {question: "label[, label]"}`.
pub fn answered_input(
    input: &Value,
    qs: &[Question],
    chosen: &[Vec<String>],
    other: &[String],
) -> Value {
    let picks = qs.iter().enumerate().map(|(i, q)| {
        let mut picked: Vec<String> = chosen.get(i).cloned().unwrap_or_default();
        if let Some(o) = other.get(i).filter(|o| !o.trim().is_empty()) {
            picked.push(o.trim().to_string());
        }
        (q.question.clone(), picked)
    });
    build::question_answers(input, picks)
}

/// Asks the model's questions with their choices (and a free answer); the answers go back in
/// `updatedInput.answers`.
#[component]
pub fn QuestionDialog(
    /// The prompt.
    prompt: Prompt,
    /// Open prompts.
    #[prop(into)]
    queued: Signal<usize>,
) -> impl IntoView {
    let store = Store::expect();
    let qs = questions(&prompt.input);
    let n = qs.len();
    let chosen: RwSignal<Vec<Vec<String>>> = RwSignal::new(vec![Vec::new(); n]);
    let other: RwSignal<Vec<String>> = RwSignal::new(vec![String::new(); n]);
    let p = StoredValue::new(prompt.clone());
    let qs_store = StoredValue::new(qs.clone());
    let complete = move || {
        chosen.with(|c| other.with(|o| (0..n).all(|i| !c[i].is_empty() || !o[i].trim().is_empty())))
    };
    let submit = move || {
        let input = p.with_value(|p| {
            qs_store.with_value(|qs| {
                answered_input(
                    &p.input,
                    qs,
                    &chosen.get_untracked(),
                    &other.get_untracked(),
                )
            })
        });
        p.with_value(|p| store.allow(p, input, vec![]));
    };
    let body = qs
        .into_iter()
        .enumerate()
        .map(|(i, q)| {
            let group = format!("q-{}-{i}", prompt.request_id);
            let multi = q.multi;
            view! {
                <fieldset class="question">
                    <legend>{(!q.header.is_empty()).then(|| view! { <span class="chip">{q.header.clone()}</span> })}{q.question.clone()}</legend>
                    {q.options
                        .into_iter()
                        .enumerate()
                        .map(|(j, (label, desc))| {
                            let l2 = label.clone();
                            let l3 = label.clone();
                            view! {
                                <label class="choice">
                                    <input
                                        type=if multi { "checkbox" } else { "radio" }
                                        name=group.clone()
                                        data-testid="question-option"
                                        data-autofocus=(i == 0 && j == 0).then_some("")
                                        prop:checked=move || chosen.with(|c| c[i].contains(&l2))
                                        on:change=move |ev| {
                                            let on = event_target_checked(&ev);
                                            chosen.update(|c| {
                                                if !multi {
                                                    c[i].clear();
                                                }
                                                c[i].retain(|x| x != &l3);
                                                if on {
                                                    c[i].push(l3.clone());
                                                }
                                            });
                                        }
                                    />
                                    <span class="choice-label">{label}</span>
                                    {(!desc.is_empty()).then(|| view! { <span class="muted">{desc}</span> })}
                                </label>
                            }
                        })
                        .collect_view()}
                    <label class="inline-field">
                        <span>"Other"</span>
                        <input
                            data-testid="question-other"
                            aria-label="Another answer"
                            prop:value=move || other.with(|o| o[i].clone())
                            on:input=move |ev| {
                                let v = event_target_value(&ev);
                                other.update(|o| o[i] = v);
                            }
                        />
                    </label>
                </fieldset>
            }
        })
        .collect_view();
    view! {
        <DialogFrame
            prompt=prompt.clone()
            title="Claude has a question"
            queued=queued
            actions=move || view! {
                <button class="danger-outline" data-testid="permission-deny" on:click=move |_| {
                    p.with_value(|p| store.deny(p, "The user chose not to answer.", false));
                }>"Skip"</button>
                <button class="primary" data-testid="permission-allow" disabled=move || !complete() on:click=move |_| submit()>
                    "Answer"
                </button>
            }
        >
            {body}
        </DialogFrame>
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_go_in_updated_input() {
        let input = json!({"questions": [
            {"question": "Which DB?", "header": "DB", "options": [{"label": "Postgres", "description": ""}, {"label": "SQLite", "description": ""}], "multiSelect": false},
            {"question": "Extras?", "header": "", "options": [{"label": "Cache", "description": ""}], "multiSelect": true}
        ]});
        let qs = questions(&input);
        assert_eq!(qs.len(), 2);
        assert!(qs[1].multi);
        let out = answered_input(
            &input,
            &qs,
            &[vec!["SQLite".into()], vec!["Cache".into()]],
            &["".into(), "Logs".into()],
        );
        assert_eq!(
            out["answers"],
            json!({"Which DB?": "SQLite", "Extras?": "Cache, Logs"})
        );
        assert_eq!(
            serde_json::to_string(&out).unwrap(),
            r#"{"questions":[{"question":"Which DB?","header":"DB","options":[{"label":"Postgres","description":""},{"label":"SQLite","description":""}],"multiSelect":false},{"question":"Extras?","header":"","options":[{"label":"Cache","description":""}],"multiSelect":true}],"answers":{"Which DB?":"SQLite","Extras?":"Cache, Logs"}}"#
        );
        assert_eq!(out["questions"], input["questions"]);
    }
}
