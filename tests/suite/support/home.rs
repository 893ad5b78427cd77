//! A scratch user for the `harness9` binary: a temporary HOME (and XDG folders) with one
//! project folder, where other tools' config files can be written in their own formats.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use super::bins::harness9_bin;

/// A scratch user: HOME, XDG config and data folders, and one project folder.
pub struct Home {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub project: PathBuf,
}

impl Home {
    pub fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        let project = root.join("work").join("proj");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        Home {
            _dir: dir,
            home,
            project,
        }
    }

    pub fn config(&self) -> PathBuf {
        self.home.join(".config")
    }

    pub fn user_file(&self) -> PathBuf {
        self.config().join("harness9/mcp.json")
    }

    pub fn project_file(&self) -> PathBuf {
        self.project.join(".mcp.json")
    }

    /// The one local scope file of the project (found by listing the data folder).
    pub fn local_file(&self) -> PathBuf {
        let projects = self.home.join(".local/share/harness9/projects");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&projects)
            .unwrap_or_else(|e| panic!("{}: {e}", projects.display()))
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(dirs.len(), 1, "{dirs:?}");
        dirs.pop().unwrap().join("mcp.json")
    }

    pub fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.run_env(args, &[])
    }

    /// [`Home::run`] with more environment variables (`PATH` among them: it replaces ours).
    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        std::process::Command::new(harness9_bin())
            .args(args)
            .env_remove("HARNESS9_REGISTRY")
            .envs(env.iter().copied())
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.config())
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env_remove("HARNESS9_DATA_DIR")
            .env_remove("HARNESS9_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env("HARNESS9_CREDENTIALS", "file")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    }

    /// [`Home::run_env`], expecting exit code `code`; returns stdout and stderr.
    pub fn expect(&self, args: &[&str], env: &[(&str, &str)], code: i32) -> (String, String) {
        let o = self.run_env(args, env);
        let (out, err) = texts(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}\n{out}\n{err}");
        (out, err)
    }

    /// Runs and expects success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{args:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Runs and expects exit code 2; returns stderr.
    pub fn usage_error(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        String::from_utf8_lossy(&o.stderr).into_owned()
    }

    pub fn json(&self, path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }
}

/// What a process wrote on stdout and stderr, as text.
pub fn texts(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}
