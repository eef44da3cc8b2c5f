//! Permission suggestions as checkable, editable rules.

use leptos::prelude::*;
use serde_json::{Value, json};

use crate::format::field;

/// Label of a rule destination.
pub fn destination_label(d: &str) -> &str {
    match d {
        "session" => "this session",
        "localSettings" => "this project (local settings)",
        "projectSettings" => "this project (shared settings)",
        "userSettings" => "all projects (user settings)",
        "cliArg" => "command line",
        other => other,
    }
}

/// Human description of a `PermissionUpdate`.
pub fn describe(update: &Value) -> String {
    let dest = destination_label(field(update, "destination"));
    match field(update, "type") {
        "addRules" | "replaceRules" | "removeRules" => {
            let verb = match (field(update, "type"), field(update, "behavior")) {
                ("removeRules", _) => "Remove rule",
                (_, "deny") => "Always deny",
                (_, "ask") => "Always ask for",
                _ => "Always allow",
            };
            let rules: Vec<String> = update
                .get("rules")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .map(|x| match x.get("ruleContent").and_then(Value::as_str) {
                            Some(c) => format!("{}({c})", field(x, "toolName")),
                            None => field(x, "toolName").to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            format!("{verb} {} — {dest}", rules.join(", "))
        }
        "setMode" => format!("Switch to {} mode — {dest}", field(update, "mode")),
        "addDirectories" | "removeDirectories" => {
            let dirs: Vec<&str> = update
                .get("directories")
                .and_then(Value::as_array)
                .map(|d| d.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let verb = if field(update, "type") == "addDirectories" {
                "Allow access to"
            } else {
                "Remove access to"
            };
            format!("{verb} {} — {dest}", dirs.join(", "))
        }
        other => format!("{other} — {dest}"),
    }
}

/// Sets `rules[index].ruleContent` (an empty text removes it: a whole-tool rule).
pub fn set_rule_content(update: &mut Value, index: usize, content: &str) {
    if let Some(rule) = update
        .get_mut("rules")
        .and_then(|r| r.get_mut(index))
        .and_then(Value::as_object_mut)
    {
        if content.trim().is_empty() {
            rule.remove("ruleContent");
        } else {
            rule.insert("ruleContent".into(), json!(content));
        }
    }
}

/// The `permission_suggestions` of a prompt: each a checkbox (`permission-suggestion`) with its
/// destination and editable parts (rule contents, directories, mode). Checked ones are sent as
/// `updatedPermissions`.
#[component]
pub fn SuggestionList(
    /// (checked, update) per suggestion, edited in place.
    picks: RwSignal<Vec<(bool, Value)>>,
) -> impl IntoView {
    let count = picks.with_untracked(Vec::len);
    (count > 0).then(|| {
        view! {
            <fieldset class="suggestions">
                <legend>"Remember this decision"</legend>
                {(0..count)
                    .map(|i| {
                        let update = move || picks.with(|p| p[i].1.clone());
                        let kind = picks.with_untracked(|p| field(&p[i].1, "type").to_string());
                        let rules_len = picks.with_untracked(|p| p[i].1.get("rules").and_then(Value::as_array).map_or(0, Vec::len));
                        let editors = match kind.as_str() {
                            "addRules" | "replaceRules" | "removeRules" => (0..rules_len)
                                .map(|j| {
                                    let tool = picks.with_untracked(|p| field(&p[i].1["rules"][j], "toolName").to_string());
                                    view! {
                                        <label class="inline-field">
                                            <span>{format!("{tool}(")}</span>
                                            <input
                                                class="mono"
                                                data-testid="permission-suggestion-rule"
                                                aria-label=format!("Rule content for {tool} (empty: the whole tool)")
                                                placeholder="any"
                                                prop:value=move || picks.with(|p| field(&p[i].1["rules"][j], "ruleContent").to_string())
                                                on:input=move |ev| {
                                                    let v = event_target_value(&ev);
                                                    picks.update(|p| set_rule_content(&mut p[i].1, j, &v));
                                                }
                                            />
                                            <span>")"</span>
                                        </label>
                                    }
                                    .into_any()
                                })
                                .collect::<Vec<_>>(),
                            "addDirectories" | "removeDirectories" => vec![view! {
                                <label class="inline-field">
                                    <span>"Directories"</span>
                                    <input
                                        class="mono"
                                        data-testid="permission-suggestion-directories"
                                        aria-label="Directories, comma separated"
                                        prop:value=move || picks.with(|p| {
                                            p[i].1.get("directories").and_then(Value::as_array).map(|d| {
                                                d.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")
                                            }).unwrap_or_default()
                                        })
                                        on:input=move |ev| {
                                            let v = event_target_value(&ev);
                                            let dirs: Vec<Value> = v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| json!(s)).collect();
                                            picks.update(|p| { p[i].1["directories"] = Value::Array(dirs); });
                                        }
                                    />
                                </label>
                            }
                            .into_any()],
                            "setMode" => vec![view! {
                                <label class="inline-field">
                                    <span>"Mode"</span>
                                    <select
                                        aria-label="Mode to switch to"
                                        prop:value=move || picks.with(|p| field(&p[i].1, "mode").to_string())
                                        on:change=move |ev| {
                                            let v = event_target_value(&ev);
                                            picks.update(|p| { p[i].1["mode"] = json!(v); });
                                        }
                                    >
                                        {["default", "acceptEdits", "plan"].map(|m| view! { <option value=m>{m}</option> })}
                                    </select>
                                </label>
                            }
                            .into_any()],
                            _ => vec![],
                        };
                        view! {
                            <div class="suggestion">
                                <label class="check">
                                    <input
                                        type="checkbox"
                                        data-testid="permission-suggestion"
                                        data-suggestion-type=kind.clone()
                                        prop:checked=move || picks.with(|p| p[i].0)
                                        on:change=move |ev| {
                                            let on = event_target_checked(&ev);
                                            picks.update(|p| p[i].0 = on);
                                        }
                                    />
                                    <span>{move || describe(&update())}</span>
                                </label>
                                <div class="suggestion-edit">
                                    {editors}
                                    <label class="inline-field">
                                        <span>"Where"</span>
                                        <select
                                            data-testid="permission-suggestion-destination"
                                            aria-label="Where to save this rule"
                                            prop:value=move || picks.with(|p| field(&p[i].1, "destination").to_string())
                                            on:change=move |ev| {
                                                let v = event_target_value(&ev);
                                                picks.update(|p| { p[i].1["destination"] = json!(v); });
                                            }
                                        >
                                            {["session", "localSettings", "projectSettings", "userSettings"]
                                                .map(|d| view! { <option value=d>{destination_label(d).to_string()}</option> })}
                                        </select>
                                    </label>
                                </div>
                            </div>
                        }
                    })
                    .collect_view()}
            </fieldset>
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_and_edits_rules() {
        let mut u = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "touch created.txt"}],
            "behavior": "allow", "destination": "localSettings"});
        assert_eq!(
            describe(&u),
            "Always allow Bash(touch created.txt) — this project (local settings)"
        );
        set_rule_content(&mut u, 0, "touch:*");
        assert_eq!(u["rules"][0]["ruleContent"], "touch:*");
        set_rule_content(&mut u, 0, "  ");
        assert!(
            u["rules"][0].get("ruleContent").is_none(),
            "whole-tool rule omits ruleContent"
        );
        let m = json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"});
        assert_eq!(describe(&m), "Switch to acceptEdits mode — this session");
    }
}
