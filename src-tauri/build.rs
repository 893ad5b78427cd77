//! tauri.conf.json sits at the repository root (one config for the CLI and the crates).
//!
//! The app's own commands are declared in its permission manifest, so the webview may call
//! only those granted in the capability (tauri.conf.json) and nothing else. The list must
//! match `generate_handler!` in main.rs; a test in main.rs checks both lists and the
//! capability against each other.

/// Every command the desktop app registers (the `generate_handler!` list in main.rs).
const COMMANDS: &[&str] = &[
    "current_project",
    "open_project",
    "pick_folder",
    "recent_projects",
    "report_painted",
    "get_status",
    "pending_approvals",
    "approve",
    "restart_server",
    "stop_server",
    "set_server_disabled",
    "server_entry",
    "sign_in",
    "sign_out",
    "follow_log",
    "unfollow_log",
    "list_tools",
    "tool_detail",
    "held_tools",
    "accept_tools",
    "call_tool",
    "cancel_tool_call",
    "read_config",
    "check_config",
    "edit_config",
    "save_config",
    "open_config_in_editor",
    "import_sources",
    "import_servers",
    "chat_state",
    "chat_conversations",
    "chat_open",
    "chat_new",
    "chat_send",
    "chat_stop",
    "chat_approve",
    "open_url",
    "pending_asks",
    "answer_ask",
    "chat_send_prompt",
    "list_prompts",
    "complete_prompt_argument",
    "server_details",
    "set_log_level",
    "extra_roots",
    "add_extra_root",
    "remove_extra_root",
    "list_resources",
    "read_resource",
    "subscribe_resource",
    "complete_resource",
    "save_resource",
    "sampling_grants",
    "revoke_sampling",
    "context_cost",
    "diagnostics",
    "about_info",
    "provider_settings",
    "save_provider_settings",
    "forget_provider_key",
    "test_provider",
    "permission_rules",
    "set_permission",
    "open_view",
    "view_message",
    "close_view",
    "pending_messages",
    "send_pending",
    "discard_pending",
    "save_download",
];

fn main() {
    let attributes = tauri_build::Attributes::new()
        .config_path("../tauri.conf.json")
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    tauri_build::try_build(attributes).expect("tauri-build: read ../tauri.conf.json");
}
