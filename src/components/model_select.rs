//! The model picker.

use leptos::prelude::*;

use crate::components::picker::Picker;
use crate::state::ModelChoice;
use crate::store::Store;

/// The picker's options (value, label) and the selected value. After a switch the CLI reports the
/// model id an alias resolved to (`haiku` → `claude-haiku-5-5`): that selects the option it came
/// from (the one last chosen here when several resolve to it), not an extra option. Only a model
/// none of the options stands for (e.g. started with a full id) is added, first.
pub fn picker_options(
    models: &[ModelChoice],
    current: &str,
    chosen: Option<&str>,
) -> (Vec<(String, String)>, String) {
    let mut opts: Vec<(String, String)> = models
        .iter()
        .map(|m| (m.value.clone(), m.display_name.clone()))
        .collect();
    let selected = if current.is_empty() || models.iter().any(|m| m.value == current) {
        current.to_string()
    } else {
        let resolving: Vec<&ModelChoice> = models
            .iter()
            .filter(|m| m.resolved_model.as_deref() == Some(current))
            .collect();
        match resolving.iter().find(|m| Some(m.value.as_str()) == chosen) {
            Some(m) => m.value.clone(),
            None => match resolving.first() {
                Some(m) => m.value.clone(),
                None => {
                    opts.insert(0, (current.to_string(), current.to_string()));
                    current.to_string()
                }
            },
        }
    };
    if opts.is_empty() {
        // Models not known yet (or the CLI has none to offer): still name the current one.
        opts.push((String::new(), "Default".to_string()));
    }
    (opts, selected)
}

/// Picks the session's model from the `initialize` response's models (`set_model`).
#[component]
pub fn ModelSelect() -> impl IntoView {
    let store = Store::expect();
    let picker = Memo::new(move |_| {
        store.session.with(|s| {
            let info = s.info();
            picker_options(
                &info.models,
                info.model.as_deref().unwrap_or_default(),
                info.model_choice.as_deref(),
            )
        })
    });
    let current = move || picker.with(|(_, sel)| sel.clone());
    let on_change = move |v: String| {
        if !v.is_empty() && v != current() {
            store.set_model(Some(v));
        }
    };
    view! { <Picker label="Model" test_id="model-select" aria_label="Model" options=picker on_change=on_change /> }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(value: &str, resolved: &str) -> ModelChoice {
        ModelChoice {
            value: value.into(),
            display_name: value.to_uppercase(),
            description: String::new(),
            resolved_model: Some(resolved.into()),
        }
    }

    #[test]
    fn a_resolved_id_selects_its_alias_not_an_extra_option() {
        let models = [
            m("default", "claude-opus-5-5"),
            m("opus", "claude-opus-5-5"),
            m("haiku", "claude-haiku-5-5"),
        ];
        let (opts, sel) = picker_options(&models, "claude-haiku-5-5", Some("haiku"));
        assert_eq!(opts.len(), 3, "no extra option: {opts:?}");
        assert_eq!(sel, "haiku");
        // Two aliases resolve to the same id: the one chosen here wins, else the first.
        assert_eq!(
            picker_options(&models, "claude-opus-5-5", Some("opus")).1,
            "opus"
        );
        assert_eq!(
            picker_options(&models, "claude-opus-5-5", None).1,
            "default"
        );
        // A value itself.
        assert_eq!(picker_options(&models, "haiku", None).1, "haiku");
    }

    #[test]
    fn a_model_none_of_the_options_stands_for_is_added() {
        let models = [m("default", "claude-opus-5-5")];
        let (opts, sel) = picker_options(&models, "claude-sonnet-4-5", None);
        assert_eq!(opts[0].0, "claude-sonnet-4-5");
        assert_eq!(opts.len(), 2);
        assert_eq!(sel, "claude-sonnet-4-5");
        let (opts, sel) = picker_options(&[], "", None);
        assert_eq!((opts.len(), sel.as_str()), (1, ""));
    }
}
