//! The permission-mode picker.

use leptos::prelude::*;

use crate::components::picker::Picker;
use crate::store::Store;

/// The modes offered (value, label).
pub const MODES: &[(&str, &str)] = &[
    ("default", "Ask before acting"),
    ("acceptEdits", "Accept edits"),
    ("plan", "Plan only"),
    ("bypassPermissions", "Bypass permissions ⚠"),
];

/// Picks the permission mode (`set_permission_mode`). Choosing `bypassPermissions` asks for
/// confirmation with a clear warning first; while it is on, a warning stays visible.
#[component]
pub fn PermissionModeSelect() -> impl IntoView {
    let store = Store::expect();
    let current = move || {
        store.session.with(|s| {
            s.info()
                .permission_mode
                .clone()
                .unwrap_or_else(|| "default".into())
        })
    };
    let confirming = RwSignal::new(false);
    let select: NodeRef<leptos::html::Select> = NodeRef::new();
    let reset_select = move || {
        if let Some(el) = select.get_untracked() {
            el.set_value(&current());
        }
    };
    let options = Signal::derive(move || {
        let cur = current();
        let mut modes: Vec<(String, String)> = MODES
            .iter()
            .map(|(v, l)| (v.to_string(), l.to_string()))
            .collect();
        if !modes.iter().any(|(v, _)| *v == cur) {
            modes.push((cur.clone(), cur.clone()));
        }
        (modes, cur)
    });
    let on_change = move |v: String| {
        if v == "bypassPermissions" {
            confirming.set(true);
            reset_select();
        } else if v != current() {
            store.set_permission_mode(&v);
        }
    };
    view! {
        <Picker
            label="Permissions"
            test_id="permission-mode-select"
            aria_label="Permission mode"
            options=options
            on_change=on_change
            select_ref=select
        />
        {move || confirming.get().then(|| view! {
            <div class="bypass-confirm" role="alertdialog" aria-label="Confirm bypass permissions" data-testid="bypass-confirm">
                <strong>"Bypass permissions?"</strong>
                <span>"Claude Code will run every tool — shell commands, file writes, network — without asking. Only do this in a sandbox you can throw away."</span>
                <button class="danger" data-testid="bypass-confirm-yes" on:click=move |_| {
                    confirming.set(false);
                    store.set_permission_mode("bypassPermissions");
                }>"Bypass permissions"</button>
                <button on:click=move |_| confirming.set(false)>"Cancel"</button>
            </div>
        })}
        {move || (current() == "bypassPermissions").then(|| view! {
            <span class="chip danger" role="status" data-testid="bypass-warning">"⚠ Permissions bypassed"</span>
        })}
    }
}
