//! Permission suggestions as checkable, editable rules.

use bridge_protocol::{PermissionMode, PermissionUpdate, PermissionUpdateDestination};
use leptos::prelude::*;

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
pub fn describe(update: &PermissionUpdate) -> String {
    let dest = update.destination();
    let dest = destination_label(dest.as_ref().map_or("", |d| d.as_str()));
    match update {
        PermissionUpdate::AddRules(u)
        | PermissionUpdate::ReplaceRules(u)
        | PermissionUpdate::RemoveRules(u) => {
            let verb = match (update.tag(), u.behavior.as_str()) {
                ("removeRules", _) => "Remove rule",
                (_, "deny") => "Always deny",
                (_, "ask") => "Always ask for",
                _ => "Always allow",
            };
            let rules: Vec<String> = u
                .rules
                .iter()
                .map(|x| match &x.rule_content {
                    Some(c) => format!("{}({c})", x.tool_name),
                    None => x.tool_name.clone(),
                })
                .collect();
            format!("{verb} {} — {dest}", rules.join(", "))
        }
        PermissionUpdate::SetMode(u) => format!("Switch to {} mode — {dest}", u.mode.as_str()),
        PermissionUpdate::AddDirectories(u) | PermissionUpdate::RemoveDirectories(u) => {
            let verb = if update.tag() == "addDirectories" {
                "Allow access to"
            } else {
                "Remove access to"
            };
            format!("{verb} {} — {dest}", u.directories.join(", "))
        }
        PermissionUpdate::Other(_) => format!("{} — {dest}", update.tag()),
    }
}

/// The mode of a `setMode` update (`""` for other kinds).
fn mode_of(update: &PermissionUpdate) -> String {
    match update {
        PermissionUpdate::SetMode(u) => u.mode.as_str().to_string(),
        _ => String::new(),
    }
}

/// The `permission_suggestions` of a prompt: each a checkbox (`permission-suggestion`) with its
/// destination and editable parts (rule contents, directories, mode). Checked ones are sent as
/// `updatedPermissions`.
#[component]
pub fn SuggestionList(
    /// (checked, update) per suggestion, edited in place.
    picks: RwSignal<Vec<(bool, PermissionUpdate)>>,
) -> impl IntoView {
    let count = picks.with_untracked(Vec::len);
    (count > 0).then(|| {
        view! {
            <fieldset class="suggestions">
                <legend>"Remember this decision"</legend>
                {(0..count)
                    .map(|i| {
                        let update = move || picks.with(|p| p[i].1.clone());
                        let kind = picks.with_untracked(|p| p[i].1.tag().to_string());
                        let rules_len = picks.with_untracked(|p| p[i].1.rules().len());
                        let editors = match kind.as_str() {
                            "addRules" | "replaceRules" | "removeRules" => (0..rules_len)
                                .map(|j| {
                                    let tool = picks.with_untracked(|p| p[i].1.rules()[j].tool_name.clone());
                                    view! {
                                        <label class="inline-field">
                                            <span>{format!("{tool}(")}</span>
                                            <input
                                                class="mono"
                                                data-testid="permission-suggestion-rule"
                                                aria-label=format!("Rule content for {tool} (empty: the whole tool)")
                                                placeholder="any"
                                                prop:value=move || picks.with(|p| p[i].1.rules().get(j).and_then(|r| r.rule_content.clone()).unwrap_or_default())
                                                on:input=move |ev| {
                                                    let v = event_target_value(&ev);
                                                    picks.update(|p| p[i].1.set_rule_content(j, &v));
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
                                        prop:value=move || picks.with(|p| p[i].1.directories().join(", "))
                                        on:input=move |ev| {
                                            let v = event_target_value(&ev);
                                            let dirs: Vec<String> = v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
                                            picks.update(|p| p[i].1.set_directories(dirs));
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
                                        prop:value=move || picks.with(|p| mode_of(&p[i].1))
                                        on:change=move |ev| {
                                            let v = event_target_value(&ev);
                                            picks.update(|p| p[i].1.set_mode_to(PermissionMode::from(v.as_str())));
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
                                            prop:value=move || picks.with(|p| p[i].1.destination().map(|d| d.as_str().to_string()).unwrap_or_default())
                                            on:change=move |ev| {
                                                let v = event_target_value(&ev);
                                                picks.update(|p| p[i].1.set_destination(PermissionUpdateDestination::from(v.as_str())));
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
    use serde_json::json;

    use super::*;

    fn update(v: serde_json::Value) -> PermissionUpdate {
        PermissionUpdate::from_value(v).unwrap()
    }

    #[test]
    fn describes_and_edits_rules() {
        let mut u = update(
            json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "touch created.txt"}],
            "behavior": "allow", "destination": "localSettings"}),
        );
        assert_eq!(
            describe(&u),
            "Always allow Bash(touch created.txt) — this project (local settings)"
        );
        u.set_rule_content(0, "touch:*");
        assert_eq!(
            serde_json::to_value(&u).unwrap()["rules"][0]["ruleContent"],
            "touch:*"
        );
        u.set_rule_content(0, "  ");
        assert!(
            serde_json::to_value(&u).unwrap()["rules"][0]
                .get("ruleContent")
                .is_none(),
            "whole-tool rule omits ruleContent"
        );
        let m = update(json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"}));
        assert_eq!(describe(&m), "Switch to acceptEdits mode — this session");
        assert_eq!(mode_of(&m), "acceptEdits");
        let d = update(
            json!({"type": "addDirectories", "directories": ["/a", "/b"], "destination": "userSettings"}),
        );
        assert_eq!(
            describe(&d),
            "Allow access to /a, /b — all projects (user settings)"
        );
        let deny = update(
            json!({"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "deny", "destination": "session"}),
        );
        assert_eq!(describe(&deny), "Always deny Bash — this session");
        let other = update(json!({"type": "futureKind", "destination": "cliArg"}));
        assert_eq!(describe(&other), "futureKind — command line");
    }
}
