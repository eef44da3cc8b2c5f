//! Per-tool editors for a permission prompt's input.

use leptos::prelude::*;
use serde_json::{Map, Value};

use crate::components::DiffView;
use crate::format::{field, pretty};

/// `base` with string fields replaced.
pub fn with_fields(base: &Value, fields: &[(&str, String)]) -> Value {
    let mut obj = base.as_object().cloned().unwrap_or_else(Map::new);
    for (k, v) in fields {
        obj.insert((*k).to_string(), Value::String(v.clone()));
    }
    Value::Object(obj)
}

/// Parses the JSON editor's text: an object, or a message saying what is wrong.
pub fn parse_object(text: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => Err("The input must be a JSON object ({ … }).".into()),
        Err(e) => Err(format!("Invalid JSON: {e}")),
    }
}

/// One signal per field of `input` named in `keys` (its text), and a `push` that writes `base`
/// with those fields replaced by the signals' text into `updated`.
fn edited_fields<const N: usize>(
    input: &Value,
    keys: [&'static str; N],
    base: StoredValue<Value>,
    updated: RwSignal<Result<Value, String>>,
) -> ([RwSignal<String>; N], impl Fn() + Copy + 'static) {
    let signals = keys.map(|k| RwSignal::new(field(input, k).to_string()));
    let push = move || {
        let fields: [(&str, String); N] =
            std::array::from_fn(|i| (keys[i], signals[i].get_untracked()));
        updated.set(Ok(base.with_value(|b| with_fields(b, &fields))));
    };
    (signals, push)
}

/// The file path of an Edit or Write (`permission-field-file_path`); calls `push` after each edit.
#[component]
fn FilePathField(
    /// The path.
    path: RwSignal<String>,
    /// Sends the edited input.
    push: impl Fn() + Copy + 'static,
) -> impl IntoView {
    view! {
        <label class="field">
            <span>"File"</span>
            <input class="mono" data-testid="permission-field-file_path" aria-label="File path" prop:value=move || path.get()
                on:input=move |ev| { path.set(event_target_value(&ev)); push(); } />
        </label>
    }
}

/// A text field of the input as a text area (`permission-field-<key>`); calls `push` after each
/// edit.
#[component]
fn TextAreaField(
    /// The visible label.
    label: &'static str,
    /// The input's field.
    key: &'static str,
    /// The accessible name.
    aria_label: &'static str,
    /// Its height in lines.
    rows: u32,
    /// Whether the dialog focuses it on open (`data-autofocus`).
    #[prop(optional)]
    autofocus: bool,
    /// The text.
    value: RwSignal<String>,
    /// Sends the edited input.
    push: impl Fn() + Copy + 'static,
) -> impl IntoView {
    view! {
        <label class="field">
            <span>{label}</span>
            <textarea
                class="mono"
                data-testid=format!("permission-field-{key}")
                data-autofocus=autofocus.then_some("")
                aria-label=aria_label
                rows=rows
                spellcheck="false"
                prop:value=move || value.get()
                on:input=move |ev| {
                    value.set(event_target_value(&ev));
                    push();
                }
            ></textarea>
        </label>
    }
}

/// The input as an editor for its tool (`permission-field-<name>`): Bash — the command line;
/// Edit — path, old and new strings with a live diff; Write — path and content; anything else — a
/// JSON editor validated as you type (`permission-json-editor`). Writes the input to send into
/// `updated` (an error while it is invalid).
#[component]
pub fn InputEditor(
    /// Tool name.
    tool_name: String,
    /// The proposed input.
    input: Value,
    /// The input to send.
    updated: RwSignal<Result<Value, String>>,
) -> impl IntoView {
    let base = StoredValue::new(input.clone());
    match tool_name.as_str() {
        "Bash" => {
            let ([command], push) = edited_fields(&input, ["command"], base, updated);
            view! {
                <TextAreaField label="Command" key="command" aria_label="Command to run" rows=3 autofocus=true value=command push=push />
            }
            .into_any()
        }
        "Edit" => {
            let ([path, old, new], push) = edited_fields(
                &input,
                ["file_path", "old_string", "new_string"],
                base,
                updated,
            );
            view! {
                <FilePathField path=path push=push />
                <div class="two-col">
                    <TextAreaField label="Replace" key="old_string" aria_label="Text to replace" rows=5 value=old push=push />
                    <TextAreaField label="With" key="new_string" aria_label="Replacement text" rows=5 autofocus=true value=new push=push />
                </div>
                <DiffView old=old new=new label="Preview".to_string() />
            }
            .into_any()
        }
        "Write" => {
            let ([path, content], push) =
                edited_fields(&input, ["file_path", "content"], base, updated);
            view! {
                <FilePathField path=path push=push />
                <TextAreaField label="Content" key="content" aria_label="File content" rows=10 autofocus=true value=content push=push />
            }
            .into_any()
        }
        _ => {
            let text = RwSignal::new(pretty(&input));
            view! {
                <label class="field">
                    <span>"Input (JSON)"</span>
                    <textarea
                        class="mono"
                        data-testid="permission-json-editor"
                        data-autofocus
                        aria-label="Tool input as JSON"
                        aria-invalid=move || updated.with(|u| u.is_err()).to_string()
                        rows="8"
                        spellcheck="false"
                        prop:value=move || text.get()
                        on:input=move |ev| {
                            let t = event_target_value(&ev);
                            updated.set(parse_object(&t));
                            text.set(t);
                        }
                    ></textarea>
                </label>
                {move || updated.with(|u| u.as_ref().err().cloned()).map(|e| view! {
                    <p class="field-error" role="alert" data-testid="permission-json-error">{e}</p>
                })}
            }
            .into_any()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_replace_and_keep_the_rest() {
        let base = json!({"command": "a", "timeout": 5});
        assert_eq!(
            with_fields(&base, &[("command", "b".into())]),
            json!({"command": "b", "timeout": 5})
        );
    }

    #[test]
    fn json_editor_accepts_objects_only() {
        assert!(parse_object("{\"a\": 1}").is_ok());
        assert!(parse_object("[1]").unwrap_err().contains("object"));
        assert!(
            parse_object("{\"a\": ")
                .unwrap_err()
                .starts_with("Invalid JSON")
        );
    }
}
