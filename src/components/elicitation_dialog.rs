//! The MCP elicitation dialog.

use leptos::prelude::*;
use serde_json::{Map, Value, json};

use crate::components::prompt_dock::DialogFrame;
use crate::format::{field, items};
use crate::markdown::safe_url;
use crate::state::Prompt;
use crate::store::Store;

/// A form field from a JSON schema property.
#[derive(Clone, Debug, PartialEq)]
pub struct FormField {
    /// Property name.
    pub name: String,
    /// Label (title or name).
    pub label: String,
    /// `string`, `number`, `integer`, `boolean`.
    pub kind: String,
    /// `enum` values.
    pub choices: Vec<String>,
    /// Required.
    pub required: bool,
    /// Description.
    pub description: String,
}

/// The fields of a flat object schema, in `property_order` when given.
pub fn form_fields(schema: &Value, order: Option<&Value>) -> Vec<FormField> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return vec![];
    };
    let required: Vec<&str> = items(schema, "required")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let mut names: Vec<String> = order
        .and_then(Value::as_array)
        .map(|o| {
            o.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    for k in props.keys() {
        if !names.contains(k) {
            names.push(k.clone());
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let p = props.get(&name)?;
            Some(FormField {
                label: p
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or(&name)
                    .to_string(),
                kind: field(p, "type").to_string(),
                choices: items(p, "enum")
                    .iter()
                    .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                    .collect(),
                required: required.contains(&name.as_str()),
                description: field(p, "description").to_string(),
                name,
            })
        })
        .collect()
}

/// Converts the form's text values into typed content; an error names the first bad field.
pub fn form_content(
    fields: &[FormField],
    values: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for f in fields {
        let v = values.get(&f.name).cloned().unwrap_or(Value::Null);
        let typed = match (f.kind.as_str(), &v) {
            ("boolean", Value::Bool(b)) => json!(b),
            ("boolean", _) => json!(false),
            (_, Value::String(s)) if s.trim().is_empty() => {
                if f.required {
                    return Err(format!("{} is required.", f.label));
                }
                continue;
            }
            ("number", Value::String(s)) => json!(
                s.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("{} must be a number.", f.label))?
            ),
            ("integer", Value::String(s)) => json!(
                s.trim()
                    .parse::<i64>()
                    .map_err(|_| format!("{} must be a whole number.", f.label))?
            ),
            (_, Value::Null) => {
                if f.required {
                    return Err(format!("{} is required.", f.label));
                }
                continue;
            }
            _ => v,
        };
        out.insert(f.name.clone(), typed);
    }
    Ok(out)
}

/// An MCP server asks for input: a form built from its schema (or a URL to visit), answered with
/// `{action: accept, content}`, `decline` or `cancel`.
#[component]
pub fn ElicitationDialog(
    /// The prompt.
    prompt: Prompt,
    /// Open prompts.
    #[prop(into)]
    queued: Signal<usize>,
) -> impl IntoView {
    let store = Store::expect();
    let fields = form_fields(&prompt.input, prompt.request.get("property_order"));
    let values: RwSignal<Map<String, Value>> = RwSignal::new(Map::new());
    // Until the person has entered something, what is missing is a hint, not an error.
    let touched = Memo::new(move |_| values.with(|v| !v.is_empty()));
    let fields_store = StoredValue::new(fields.clone());
    let rid = StoredValue::new(prompt.request_id.clone());
    let result =
        Memo::new(move |_| values.with(|v| fields_store.with_value(|f| form_content(f, v))));
    let url = field(&prompt.request, "url").to_string();
    let title = prompt
        .title
        .clone()
        .unwrap_or_else(|| format!("MCP server “{}” asks for input", prompt.tool_name));
    let form = fields
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            let name = f.name.clone();
            let n2 = name.clone();
            let input = if f.kind == "boolean" {
                view! {
                    <input type="checkbox" data-testid=format!("elicitation-field-{name}") data-autofocus=(i == 0).then_some("")
                        on:change=move |ev| { let on = event_target_checked(&ev); values.update(|v| { v.insert(n2.clone(), json!(on)); }); } />
                }
                .into_any()
            } else if !f.choices.is_empty() {
                let choices = f.choices.clone();
                view! {
                    <select data-testid=format!("elicitation-field-{name}") data-autofocus=(i == 0).then_some("")
                        on:change=move |ev| { let s = event_target_value(&ev); values.update(|v| { v.insert(n2.clone(), json!(s)); }); }>
                        <option value="">"—"</option>
                        {choices.into_iter().map(|c| { let label = c.clone(); view! { <option value=c>{label}</option> } }).collect_view()}
                    </select>
                }
                .into_any()
            } else {
                let ty = if matches!(f.kind.as_str(), "number" | "integer") { "number" } else { "text" };
                view! {
                    <input type=ty data-testid=format!("elicitation-field-{name}") data-autofocus=(i == 0).then_some("")
                        on:input=move |ev| { let s = event_target_value(&ev); values.update(|v| { v.insert(n2.clone(), json!(s)); }); } />
                }
                .into_any()
            };
            view! {
                <label class="field" class:field-check=f.kind == "boolean">
                    <span>{f.label}{f.required.then_some(" *")}</span>
                    {input}
                    {(!f.description.is_empty()).then(|| view! { <span class="muted small">{f.description}</span> })}
                </label>
            }
        })
        .collect_view();
    view! {
        <DialogFrame
            prompt=prompt.clone()
            title=title
            queued=queued
            actions=move || view! {
                <button data-testid="elicitation-cancel" on:click=move |_| rid.with_value(|r| store.cancel_elicitation(r))>"Cancel"</button>
                <button class="danger-outline" data-testid="permission-deny" on:click=move |_| rid.with_value(|r| store.decline_elicitation(r))>"Decline"</button>
                <button class="primary" data-testid="permission-allow" disabled=move || result.with(|r| r.is_err()) on:click=move |_| {
                    if let Ok(content) = result.get_untracked() {
                        rid.with_value(|r| store.accept_elicitation(r, content));
                    }
                }>"Submit"</button>
            }
        >
            {prompt.description.clone().map(|d| view! { <p class="dialog-desc">{d}</p> })}
            {(!url.is_empty()).then(|| {
                if safe_url(&url) && url.starts_with("https://") {
                    view! { <p><a href=url.clone() rel="noopener noreferrer" target="_blank">{url.clone()}</a></p> }.into_any()
                } else {
                    view! { <p><code>{url.clone()}</code></p> }.into_any()
                }
            })}
            {form}
            {move || result.with(|r| r.as_ref().err().cloned()).map(|e| if touched.get() {
                view! { <p class="field-error" role="alert">{e}</p> }.into_any()
            } else {
                view! { <p class="muted small">{e}</p> }.into_any()
            })}
        </DialogFrame>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_to_fields_and_content() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "title": "Name"}, "age": {"type": "integer"}, "ok": {"type": "boolean"},
            "color": {"type": "string", "enum": ["red", "blue"]}}, "required": ["name"]});
        let f = form_fields(&schema, Some(&json!(["ok", "name"])));
        assert_eq!(
            f.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(),
            vec!["ok", "name", "age", "color"]
        );
        assert!(f[1].required);
        let mut v = Map::new();
        assert!(form_content(&f, &v).unwrap_err().contains("Name"));
        v.insert("name".into(), json!("Ada"));
        v.insert("age".into(), json!("x"));
        assert!(form_content(&f, &v).unwrap_err().contains("whole number"));
        v.insert("age".into(), json!("36"));
        let content = form_content(&f, &v).unwrap();
        assert_eq!(
            Value::Object(content.clone()),
            json!({"ok": false, "name": "Ada", "age": 36})
        );
        // What Submit sends (the same bytes the dialog wrote itself before the builder).
        let sent = bridge_protocol::build::value::elicitation_accept("r1", content);
        assert_eq!(
            serde_json::to_string(&sent["response"]["response"]).unwrap(),
            r#"{"action":"accept","content":{"ok":false,"name":"Ada","age":36}}"#
        );
    }
}
