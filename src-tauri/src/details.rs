//! Server details and the project's extra roots as the window shows them (the payloads
//! are the core's own types; the commands are in [`crate::commands`]).

/// Extra roots as the window shows them.
pub fn shown(roots: Vec<std::path::PathBuf>) -> Vec<String> {
    roots.iter().map(|r| r.display().to_string()).collect()
}
