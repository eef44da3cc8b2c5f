//! The context meter in the session header.

use leptos::prelude::*;

use crate::components::info_refresh::InfoRefresh;
use crate::format;
use crate::state::InfoKind;
use crate::store::Store;

/// How full the context window is (`data-testid="context-meter"`, `data-level` ok / high / full):
/// a bar with the percentage, moved by each API call's usage; tapping it shows used / window and
/// the categories (system prompt, tools, messages …) and, for controllers, asks the CLI for a
/// fresh breakdown. Shown once Claude Code has reported it;
/// observers see the last value the log holds.
#[component]
pub fn ContextMeter() -> impl IntoView {
    let store = Store::expect();
    let usage = Memo::new(move |_| store.session.with(|s| s.agent_info().context().cloned()));
    let error = Memo::new(move |_| {
        store
            .session
            .with(|s| s.agent_info().error().map(str::to_string))
    });
    let observer = Memo::new(move |_| store.session.with(|s| s.is_observer()));
    let open = RwSignal::new(false);
    move || {
        usage.get().map(|u| {
            let pct = u.percent();
            let level = u.fill().as_str();
            let short = format!("{pct:.0}%");
            let long = format!(
                "{} of {} tokens ({pct:.1}%)",
                format::tokens(u.used),
                format::tokens(u.window)
            );
            // Starts with the visible text ("13% context"), as accessible names should.
            let aria = format!("{short} context: {long}");
            let parts = u.parts.clone();
            let compact = u
                .auto_compact_at
                .map(|t| format!("Compacts on its own at {}.", format::tokens(t)));
            let model = u.model.clone();
            view! {
                <div class="context-meter info-chip" data-testid="context-meter" data-level=level data-percent=format!("{pct:.1}")>
                    <button
                        class="chip-button meter-button"
                        data-testid="context-meter-toggle"
                        aria-expanded=move || open.get().to_string()
                        aria-label=aria
                        title=long.clone()
                        on:click=move |_| {
                            open.update(|o| *o = !*o);
                            // Opening shows the CLI's own breakdown, so ask for a fresh one.
                            if open.get_untracked() && !observer.get_untracked() {
                                store.refresh_context_usage();
                            }
                        }
                    >
                        <span class="meter-bar" aria-hidden="true">
                            <span class="meter-fill" style=format!("width: {pct:.1}%")></span>
                        </span>
                        <span class="meter-text">{format!("{short} context")}</span>
                    </button>
                    {move || open.get().then(|| {
                        let parts = parts.clone();
                        view! {
                            <div class="info-popover" data-testid="context-details" role="group" aria-label="Context usage">
                                <p class="info-line"><strong>{long.clone()}</strong></p>
                                {model.clone().map(|m| view! { <p class="muted">{format!("Model: {m}")}</p> })}
                                <table class="context-parts">
                                    <tbody>
                                        {parts.into_iter().map(|p| view! {
                                            <tr class:unused=!p.used data-testid="context-part">
                                                <th scope="row">{p.name}</th>
                                                <td>{format::tokens(p.tokens)}</td>
                                            </tr>
                                        }).collect_view()}
                                    </tbody>
                                </table>
                                {compact.clone().map(|c| view! { <p class="muted">{c}</p> })}
                                {move || error.get().map(|e| view! { <p class="error-text" role="alert">{e}</p> })}
                                <InfoRefresh kind=InfoKind::ContextUsage test_id="context-refresh" />
                            </div>
                        }
                    })}
                </div>
            }
        })
    }
}
