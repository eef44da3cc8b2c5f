//! The console's components, one per file (`foo.rs` + `foo/` for its parts). Each reads from
//! context the [`crate::store::Store`], or only the handle of it that it needs
//! ([`crate::store::SessionList`], [`crate::store::Compose`], …), and never does I/O itself.

pub mod busy_button;
pub mod changes_panel;
pub mod cli_session_banner;
pub mod composer;
pub mod connection_status;
pub mod context_meter;
pub mod diff_view;
pub mod elicitation_dialog;
pub mod info_refresh;
pub mod interrupt_button;
pub mod login_screen;
pub mod markdown_view;
pub mod mcp_status;
pub mod message_row;
pub mod modal_panel;
pub mod model_select;
pub mod new_session_form;
pub mod notices;
pub mod notifications_settings;
pub mod observer_banner;
pub mod offline_banner;
pub mod permission_dialog;
pub mod permission_mode_select;
pub mod picker;
pub mod plan_dialog;
pub mod prompt_dock;
pub mod question_dialog;
pub mod session_header;
pub mod session_list;
pub mod session_state_badge;
pub mod session_view;
pub mod task_list;
pub mod tool_card;
pub mod transcript;
pub mod update_banner;
pub mod user_dialog;

pub use changes_panel::ChangesButton;
pub use composer::Composer;
pub use connection_status::ConnectionStatus;
pub use context_meter::ContextMeter;
pub use diff_view::DiffView;
pub use elicitation_dialog::ElicitationDialog;
pub use interrupt_button::InterruptButton;
pub use login_screen::LoginScreen;
pub use markdown_view::Markdown;
pub use mcp_status::McpStatus;
pub use message_row::MessageRow;
pub use model_select::ModelSelect;
pub use new_session_form::NewSessionForm;
pub use notices::Notices;
pub use notifications_settings::NotificationsSettings;
pub use observer_banner::ObserverBanner;
pub use offline_banner::OfflineBanner;
pub use permission_dialog::PermissionDialog;
pub use permission_mode_select::PermissionModeSelect;
pub use plan_dialog::PlanDialog;
pub use prompt_dock::{EarlyPrompt, PromptDock};
pub use question_dialog::QuestionDialog;
pub use session_header::SessionHeader;
pub use session_list::SessionList;
pub use session_state_badge::SessionStateBadge;
pub use session_view::SessionView;
pub use task_list::TaskListPanel;
pub use tool_card::ToolCard;
pub use transcript::Transcript;
pub use update_banner::UpdateBanner;
pub use user_dialog::UserDialog;

/// Tells `crate::lazy` how the parts whose entry points live beside their views load (the dialogs,
/// the settings panel, the session view), and the store's (what follows applied frames, the changes
/// panel's loading). Called by `crate::app::App` before any view asks; later
/// calls do nothing.
pub fn register_lazy_parts() {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    {
        thread_local! {
            static DONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        }
        if DONE.replace(true) {
            return;
        }
        prompt_dock::split_entry::register();
        notifications_settings::split_entry::register();
        new_session_form::split_entry::register();
        session_list::worktree_details::split_entry::register();
        session_view::split_entry::register();
        crate::store::split_entry::register();
    }
}
