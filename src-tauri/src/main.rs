//! `harness9-desktop [DIR]`: the desktop app, a thin Tauri shell over the harness9 core.
//!
//! Opens DIR (or `HARNESS9_PROJECT`, or the bundled example project) and shows its MCP
//! servers. The window paints at once; the project opens and its servers start behind it.
//! Quitting tears its MCP Apps views down first (quit.rs), then stops every server.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod asks;
mod auth;
mod bridge;
mod commands;
mod details;
mod errors;
mod folders;
mod icons;
mod install;
mod plans;
mod quit;
mod recent;
mod resources;
mod session;
mod tasks;
mod views;

use std::path::PathBuf;

use tauri::menu::{Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::{Emitter, Manager, RunEvent};

use bridge::{events, MenuAction};
use session::AppState;

/// Names the project folder when none is given on the command line.
const PROJECT_ENV: &str = "HARNESS9_PROJECT";

const USAGE: &str = "usage: harness9-desktop [DIR | BUNDLE.mcpb]

Opens the harness9 desktop app on the project folder DIR (the folder holding .mcp.json).
Without DIR: $HARNESS9_PROJECT, else the bundled example project, else an empty window
with File > Open Folder. Given an MCP bundle (a .mcpb file, as the file manager passes
it), the window opens its install.";

/// Set to `1` to keep WebKitGTK's accelerated compositing (see [`choose_rendering`]).
const COMPOSITING_ENV: &str = "HARNESS9_WEBKIT_COMPOSITING";

/// The web view draws without WebKitGTK's accelerated compositing unless asked otherwise
/// (`HARNESS9_WEBKIT_COMPOSITING=1`, or `WEBKIT_DISABLE_COMPOSITING_MODE` set either way).
/// The app is panels of text and lists: compositing buys it nothing visible, while its
/// layers cost the web process about 100 MB where GL is software (a VM, a remote desktop,
/// no GPU driver), and it is the usual cause of a blank window on Linux. Runs first, before
/// any thread exists.
fn choose_rendering() {
    let keep = std::env::var_os(COMPOSITING_ENV).is_some_and(|v| v == "1");
    if !keep && std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_none() {
        std::env::set_var("WEBKIT_DISABLE_COMPOSITING_MODE", "1");
    }
}

fn main() {
    choose_rendering();
    let (project, bundle) = match parse_args() {
        Ok(p) => p,
        Err(code) => std::process::exit(code),
    };
    if let Err(why) = check_display() {
        eprintln!("harness9-desktop: {why}");
        std::process::exit(2);
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(|| harness9::config::mask::MaskingWriter::new(std::io::stderr()))
        .init();
    // The reaper (which ends every server's process group if the app dies) is a fork of
    // this process: started before the window and its runtime exist, it holds a copy of
    // almost nothing.
    harness9::mcp::transport::stdio::reaper::ensure_started();

    let context = tauri::generate_context!("../tauri.conf.json");
    let app_origins = views::guard::app_origins(context.config().build.dev_url.as_ref());
    let commands = views::guard::commands(tauri::generate_handler![
        commands::current_project,
        commands::open_project,
        commands::pick_folder,
        commands::recent_projects,
        commands::report_painted,
        commands::quit_ready,
        commands::get_status,
        commands::pending_approvals,
        commands::approve,
        commands::restart_server,
        commands::stop_server,
        commands::set_server_disabled,
        commands::server_entry,
        commands::sign_in,
        commands::sign_out,
        commands::follow_log,
        commands::unfollow_log,
        commands::list_tools,
        commands::tool_detail,
        commands::held_tools,
        commands::accept_tools,
        commands::call_tool,
        commands::cancel_tool_call,
        commands::read_config,
        commands::check_config,
        commands::edit_config,
        commands::save_config,
        commands::open_config_in_editor,
        commands::import_sources,
        commands::import_servers,
        commands::chat_state,
        commands::chat_conversations,
        commands::chat_open,
        commands::chat_new,
        commands::chat_send,
        commands::chat_stop,
        commands::chat_approve,
        commands::open_url,
        commands::pending_asks,
        commands::answer_ask,
        commands::chat_send_prompt,
        commands::list_prompts,
        commands::complete_prompt_argument,
        commands::server_details,
        commands::set_log_level,
        commands::extra_roots,
        commands::add_extra_root,
        commands::remove_extra_root,
        commands::list_resources,
        commands::read_resource,
        commands::subscribe_resource,
        commands::complete_resource,
        commands::save_resource,
        commands::sampling_grants,
        commands::revoke_sampling,
        commands::context_cost,
        commands::diagnostics,
        commands::about_info,
        commands::provider_settings,
        commands::save_provider_settings,
        commands::forget_provider_key,
        commands::test_provider,
        commands::permission_rules,
        commands::set_permission,
        commands::open_view,
        commands::view_message,
        commands::close_view,
        commands::pending_messages,
        commands::send_pending,
        commands::discard_pending,
        commands::save_download,
        install::search_servers,
        install::server_versions,
        install::plan_install,
        install::plan_update,
        install::pick_bundle,
        install::plan_bundle,
        install::pick_path,
        install::opened_bundle,
        install::preview_install,
        install::commit_install,
        install::outdated_servers,
        install::server_secrets,
        install::set_server_secret,
        install::remove_server_secret,
        commands::list_tasks,
        commands::cancel_task,
        commands::task_result,
    ]);
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_opener::init())
        .plugin(tauri_plugin_dialog::init())
        .manage(AppState::default())
        .manage(quit::Quit::default())
        .on_window_event(|window, event| match event {
            // A bundle dropped on the window starts its install (the window asks for its plan).
            tauri::WindowEvent::DragDrop(tauri::DragDropEvent::Drop { paths, .. }) => {
                if let Some(p) = paths.iter().find(|p| install_arg(p.as_os_str())) {
                    let _ = window.emit(events::BUNDLE, p.display().to_string());
                }
            }
            // Its MCP Apps views hear that they go before the window does.
            tauri::WindowEvent::CloseRequested { api, .. } => {
                quit::close_requested(window.app_handle(), api);
            }
            _ => {}
        })
        .menu(build_menu)
        .on_menu_event(|app, event| {
            let action = match event.id().as_ref() {
                "open-folder" => Some(MenuAction::OpenFolder),
                "settings" => Some(MenuAction::Settings),
                // Exits through `ExitRequested` below (the views hear it first).
                "quit" => {
                    app.exit(0);
                    None
                }
                _ => None,
            };
            if let Some(action) = action {
                let _ = app.emit(events::MENU, action);
            }
        })
        // Only the app's own document reaches a command (views/guard.rs).
        .invoke_handler(move |invoke: tauri::ipc::Invoke| {
            if views::guard::admit(&invoke, &app_origins) {
                commands(invoke)
            } else {
                invoke.resolver.reject(bridge::BridgeError::new(
                    errors::ErrorCode::Internal,
                    "only the app's own window may call its commands",
                ));
                true
            }
        })
        .setup(move |app| {
            *app.state::<AppState>().opened_bundle.lock() = bundle;
            let handle = app.handle().clone();
            views::install(app.handle(), move |target| {
                let handle = handle.clone();
                async move { handle.state::<AppState>().view_document(target).await }
            })?;
            if let Some(dir) = project {
                let handle = app.handle().clone();
                tauri::async_runtime::spawn(async move {
                    let state = handle.state::<AppState>();
                    if let Err(e) = state.open(&handle, dir).await {
                        tracing::error!("{}", e.message);
                    }
                });
            }
            Ok(())
        })
        .build(context)
        .expect("build the harness9 desktop app");

    app.run(|handle, event| match event {
        // File → Quit (or any exit asked for): the views hear it first. Without a code,
        // the last window is already gone, and its views with it.
        RunEvent::ExitRequested {
            code: Some(code),
            api,
            ..
        } => quit::exit_requested(handle, code, &api),
        RunEvent::Exit => {
            // Leave no server process behind.
            let state = handle.state::<AppState>();
            tauri::async_runtime::block_on(state.shutdown());
        }
        _ => {}
    });
}

fn build_menu(app: &tauri::AppHandle) -> tauri::Result<Menu<tauri::Wry>> {
    let open = MenuItem::with_id(app, "open-folder", "Open Folder…", true, None::<&str>)?;
    let settings = MenuItem::with_id(app, "settings", "Settings (.mcp.json)", true, None::<&str>)?;
    // Not the predefined Quit: GTK menus leave that one disabled, and this one goes through
    // the views' teardown ([`quit`]).
    let quit = MenuItem::with_id(app, "quit", "Quit", true, Some("CmdOrCtrl+Q"))?;
    let file = Submenu::with_items(
        app,
        "File",
        true,
        &[
            &open,
            &settings,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    Menu::with_items(app, &[&file])
}

/// Whether an argument names a bundle to install rather than a project folder.
fn install_arg(arg: &std::ffi::OsStr) -> bool {
    let p = std::path::Path::new(arg);
    p.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("mcpb"))
        || p.is_file()
}

/// The project to open (`DIR`, `$HARNESS9_PROJECT`, or the bundled example) and a bundle to
/// install.
#[allow(clippy::type_complexity)]
fn parse_args() -> Result<(Option<PathBuf>, Option<String>), i32> {
    let mut dir = None;
    let mut bundle = None;
    for arg in std::env::args_os().skip(1) {
        match arg.to_str() {
            Some("-h" | "--help") => {
                println!("{USAGE}");
                return Err(0);
            }
            Some("-V" | "--version") => {
                println!("harness9-desktop {}", env!("CARGO_PKG_VERSION"));
                return Err(0);
            }
            Some(s) if s.starts_with('-') => {
                eprintln!("harness9-desktop: unknown option {s}\n\n{USAGE}");
                return Err(2);
            }
            _ if install_arg(&arg) && bundle.is_none() => {
                bundle = Some(PathBuf::from(&arg).display().to_string());
            }
            _ if dir.is_some() => {
                eprintln!("harness9-desktop: give one project folder\n\n{USAGE}");
                return Err(2);
            }
            _ => dir = Some(PathBuf::from(arg)),
        }
    }
    if dir.is_none() {
        dir = std::env::var_os(PROJECT_ENV)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from);
    }
    if dir.is_none() {
        let example = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/demo"));
        dir = example.is_dir().then_some(example);
    }
    Ok((dir, bundle))
}

/// A clear message instead of GTK's when there is no display to open the window on.
fn check_display() -> Result<(), String> {
    if !cfg!(target_os = "linux") {
        return Ok(());
    }
    let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    if set("DISPLAY") || set("WAYLAND_DISPLAY") {
        Ok(())
    } else {
        Err(
            "no display: neither DISPLAY nor WAYLAND_DISPLAY is set. Run it in a desktop \
             session, or under a virtual display: xvfb-run -a harness9-desktop [DIR]"
                .into(),
        )
    }
}

/// The webview's surface: the registered commands, the permission manifest (build.rs) and
/// the capability (tauri.conf.json) name the same commands, and nothing else is granted.
#[cfg(test)]
mod surface_tests {
    /// The quoted names between `start` and the next `]` of `text`.
    fn names_after(text: &str, start: &str, prefix: &str) -> Vec<String> {
        let from = text.find(start).expect("list start") + start.len();
        let body = &text[from..from + text[from..].find(']').expect("list end")];
        body.split(',')
            .map(|s| s.trim().trim_matches('"').trim_start_matches(prefix))
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn the_capability_grants_exactly_the_registered_commands() {
        let main = include_str!("main.rs");
        let build = include_str!("../build.rs");
        let registered: Vec<String> = names_after(main, "generate_handler![", "commands::")
            .into_iter()
            .map(|c| c.trim_start_matches("install::").to_string())
            .collect();
        let manifest = names_after(build, "COMMANDS: &[&str] = &[", "");
        assert_eq!(
            registered, manifest,
            "build.rs COMMANDS must list generate_handler!"
        );

        let conf: serde_json::Value =
            serde_json::from_str(include_str!("../../tauri.conf.json")).expect("config");
        let caps = conf["app"]["security"]["capabilities"]
            .as_array()
            .expect("capabilities");
        assert_eq!(caps.len(), 1, "one capability, for the main window");
        let granted: Vec<&str> = caps[0]["permissions"]
            .as_array()
            .expect("permissions")
            .iter()
            .map(|p| p.as_str().expect("a permission name"))
            .collect();
        let mut expected = vec!["core:event:allow-listen", "core:event:allow-unlisten"];
        let allows: Vec<String> = manifest
            .iter()
            .map(|c| format!("allow-{}", c.replace('_', "-")))
            .collect();
        expected.extend(allows.iter().map(String::as_str));
        assert_eq!(granted, expected);

        let csp = conf["app"]["security"]["csp"].as_str().expect("csp");
        for directive in ["object-src 'none'", "base-uri 'none'", "form-action 'none'"] {
            assert!(csp.contains(directive), "CSP lacks {directive}");
        }
        // Server and tool icons arrive as data: URLs the backend fetched and checked
        // (icons.rs): no image loads from the network, not even https:.
        let img = csp
            .split(';')
            .map(str::trim)
            .find(|d| d.starts_with("img-src "))
            .expect("img-src");
        let sources: Vec<&str> = img.split_whitespace().skip(1).collect();
        assert_eq!(sources, ["'self'", "data:", "blob:"]);
        // Frames: only MCP Apps views, each on its server's own origin of the view scheme
        // (views/scheme.rs); never the app's own origin.
        let frames = csp
            .split(';')
            .map(str::trim)
            .find(|d| d.starts_with("frame-src "))
            .expect("frame-src");
        assert_eq!(
            frames,
            format!("frame-src {}:", crate::views::scheme::VIEW_SCHEME)
        );
    }

    /// The quoted first argument of every call of `function` in `text` (`f("x"` or
    /// `f<T>("x"`).
    fn called_names(text: &str, function: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find(function) {
            rest = &rest[at + function.len()..];
            let generic_end = if rest.starts_with('<') {
                // The type argument of this call, on its line.
                let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
                line.find(">(\"").map(|i| i + 1)
            } else {
                Some(0)
            };
            let Some(open) = generic_end.filter(|i| rest[*i..].starts_with("(\"")) else {
                continue;
            };
            let name = &rest[open + 2..];
            if let Some(end) = name.find('"') {
                out.push(name[..end].to_string());
            }
        }
        out
    }

    #[test]
    fn the_ui_calls_the_registered_commands_and_hears_the_emitted_events() {
        let build = include_str!("../build.rs");
        let mut registered = names_after(build, "COMMANDS: &[&str] = &[", "");
        registered.sort();
        let backend = include_str!("../../ui/src/lib/backend/tauri.ts");
        let figures = include_str!("../../ui/e2e/figures.mjs");
        let mut used: Vec<String> = called_names(backend, "call")
            .into_iter()
            .chain(called_names(figures, "invoke"))
            .collect();
        used.sort();
        used.dedup();
        assert_eq!(
            used, registered,
            "the commands the UI calls and those registered"
        );

        let from = backend.find("EVENTS = {").expect("EVENTS");
        let body = &backend[from..from + backend[from..].find('}').expect("end of EVENTS")];
        let mut heard: Vec<&str> = body.split('"').skip(1).step_by(2).collect();
        heard.sort_unstable();
        use crate::bridge::events;
        let mut emitted = vec![
            events::STATUS,
            events::TOOLS_CHANGED,
            events::CONFIG_CHANGED,
            events::PROJECT_CHANGED,
            events::MENU,
            events::ASKS,
            events::VIEWS,
            events::BUNDLE,
            events::TASKS,
            events::QUITTING,
            crate::resources::RESOURCES_EVENT,
        ];
        emitted.sort_unstable();
        assert_eq!(
            heard, emitted,
            "the events the UI listens to and those emitted"
        );

        // The front end builds view origins with the scheme the backend serves.
        let origin = include_str!("../../ui/src/lib/views/origin.ts");
        assert!(origin.contains(&format!(
            "export const VIEW_SCHEME = \"{}\";",
            crate::views::scheme::VIEW_SCHEME
        )));
    }
}
