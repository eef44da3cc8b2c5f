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
            let command = RwSignal::new(field(&input, "command").to_string());
            view! {
                <label class="field">
                    <span>"Command"</span>
                    <textarea
                        class="mono"
                        data-testid="permission-field-command"
                        data-autofocus
                        aria-label="Command to run"
                        rows="3"
                        spellcheck="false"
                        prop:value=move || command.get()
                        on:input=move |ev| {
                            command.set(event_target_value(&ev));
                            updated.set(Ok(base.with_value(|b| with_fields(b, &[("command", command.get_untracked())]))));
                        }
                    ></textarea>
                </label>
            }
            .into_any()
        }
        "Edit" => {
            let path = RwSignal::new(field(&input, "file_path").to_string());
            let old = RwSignal::new(field(&input, "old_string").to_string());
            let new = RwSignal::new(field(&input, "new_string").to_string());
            let push = move || {
                updated.set(Ok(base.with_value(|b| {
                    with_fields(
                        b,
                        &[
                            ("file_path", path.get_untracked()),
                            ("old_string", old.get_untracked()),
                            ("new_string", new.get_untracked()),
                        ],
                    )
                })));
            };
            view! {
                <label class="field">
                    <span>"File"</span>
                    <input class="mono" data-testid="permission-field-file_path" aria-label="File path" prop:value=move || path.get()
                        on:input=move |ev| { path.set(event_target_value(&ev)); push(); } />
                </label>
                <div class="two-col">
                    <label class="field">
                        <span>"Replace"</span>
                        <textarea class="mono" data-testid="permission-field-old_string" aria-label="Text to replace" rows="5" spellcheck="false"
                            prop:value=move || old.get() on:input=move |ev| { old.set(event_target_value(&ev)); push(); }></textarea>
                    </label>
                    <label class="field">
                        <span>"With"</span>
                        <textarea class="mono" data-testid="permission-field-new_string" data-autofocus aria-label="Replacement text" rows="5" spellcheck="false"
                            prop:value=move || new.get() on:input=move |ev| { new.set(event_target_value(&ev)); push(); }></textarea>
                    </label>
                </div>
                <DiffView old=old new=new label="Preview".to_string() />
            }
            .into_any()
        }
        "Write" => {
            let path = RwSignal::new(field(&input, "file_path").to_string());
            let content = RwSignal::new(field(&input, "content").to_string());
            let push = move || {
                updated.set(Ok(base.with_value(|b| {
                    with_fields(
                        b,
                        &[
                            ("file_path", path.get_untracked()),
                            ("content", content.get_untracked()),
                        ],
                    )
                })));
            };
            view! {
                <label class="field">
                    <span>"File"</span>
                    <input class="mono" data-testid="permission-field-file_path" aria-label="File path" prop:value=move || path.get()
                        on:input=move |ev| { path.set(event_target_value(&ev)); push(); } />
                </label>
                <label class="field">
                    <span>"Content"</span>
                    <textarea class="mono" data-testid="permission-field-content" data-autofocus aria-label="File content" rows="10" spellcheck="false"
                        prop:value=move || content.get() on:input=move |ev| { content.set(event_target_value(&ev)); push(); }></textarea>
                </label>
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
