//! tauri.conf.json sits at the repository root (one config for the CLI and the crates).

fn main() {
    tauri_build::try_build(tauri_build::Attributes::new().config_path("../tauri.conf.json"))
        .expect("tauri-build: read ../tauri.conf.json");
}
