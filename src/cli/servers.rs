//! `harness9 mcp add | add-json | get | remove | import`: the `claude mcp` verbs over the
//! three config scopes. Each is one call into `harness9::config`; nothing here starts a
//! server.

use harness9::config::import::{self, ImportSource, OnConflict, Places};
use harness9::config::servers::{self, AddParts, ServerEditError};
use harness9::config::{Scope, ScopeFiles};

use super::{EXIT_FAILED, EXIT_USAGE};
use crate::ProjectArgs;

/// The scopes as `--scope` takes them.
pub const SCOPES: [&str; 3] = ["local", "project", "user"];

/// The scope `mcp add`, `add-json` and `import` write to when none is given: private to
/// the user and this project, as in Claude Code.
pub const DEFAULT_SCOPE: &str = "local";

fn files(args: &ProjectArgs) -> Result<ScopeFiles, i32> {
    if !args.project.is_dir() {
        let message = format!(
            "project folder \"{}\" does not exist",
            args.project.display()
        );
        crate::cli::out::failure(args.json, "no-project-folder", &message);
        return Err(EXIT_USAGE);
    }
    Ok(ScopeFiles::of(&args.project))
}

fn scope_of(project: &ProjectArgs, word: &str) -> Result<Scope, i32> {
    word.parse().map_err(|e: harness9::config::UnknownScope| {
        crate::cli::out::failure(project.json, e.code(), &e.to_string());
        EXIT_USAGE
    })
}

fn fail(project: &ProjectArgs, e: ServerEditError) -> i32 {
    crate::cli::out::failure(project.json, e.code(), &e.to_string());
    match e {
        ServerEditError::Save(_)
        | ServerEditError::Unreadable { .. }
        | ServerEditError::Changed { .. } => EXIT_FAILED,
        ServerEditError::Exists { .. }
        | ServerEditError::NotFound { .. }
        | ServerEditError::Ambiguous { .. }
        | ServerEditError::BadName(_)
        | ServerEditError::BadEntry(_) => EXIT_USAGE,
    }
}

/// What `mcp add` was given.
pub struct AddArgs {
    pub name: String,
    pub scope: String,
    pub parts: AddParts,
}

pub fn add(project: ProjectArgs, args: AddArgs) -> i32 {
    let entry =
        servers::check_name(&args.name).and_then(|_| servers::entry_from_parts(&args.parts));
    match entry {
        Ok(entry) => write_entry(&project, &args.name, &args.scope, entry),
        Err(e) => fail(&project, e),
    }
}

pub fn add_json(project: ProjectArgs, name: String, json: String, scope: String) -> i32 {
    let entry: serde_json::Value = match serde_json::from_str(&json) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        Ok(_) => {
            let message = "JSON must be an object like '{\"command\": \"npx\", \"args\": [\"-y\", \"server\"]}'";
            crate::cli::out::failure(project.json, "invalid-entry", message);
            return EXIT_USAGE;
        }
        Err(e) => {
            let message = format!("invalid JSON: {e}");
            crate::cli::out::failure(project.json, "invalid-json", &message);
            return EXIT_USAGE;
        }
    };
    if let Err(e) = servers::check_name(&name) {
        return fail(&project, e);
    }
    write_entry(&project, &name, &scope, entry)
}

fn write_entry(project: &ProjectArgs, name: &str, scope: &str, entry: serde_json::Value) -> i32 {
    let (files, scope) = match (files(project), scope_of(project, scope)) {
        (Ok(f), Ok(s)) => (f, s),
        (Err(c), _) | (_, Err(c)) => return c,
    };
    let kind = servers::check_entry(name, &entry)
        .map(|c| c.transport.kind())
        .unwrap_or("");
    match servers::add_server(&files, scope, name, entry) {
        Ok(path) => {
            outln!(
                "Added {kind} server \"{name}\" to the {scope} scope ({})",
                path.display()
            );
            if let Ok(found) = servers::scopes_with(&files, name) {
                if found.first() != Some(&scope) {
                    outln!(
                        "Note: the {} entry of \"{name}\" takes precedence over this one",
                        found[0]
                    );
                } else if found.len() > 1 {
                    let lower: Vec<&str> = found[1..].iter().map(|s| s.word()).collect();
                    outln!(
                        "Note: it takes precedence over the {} entry of \"{name}\"",
                        lower.join(" and ")
                    );
                }
            }
            if scope == Scope::Project {
                outln!("Project servers start after you approve them (run with --yes, or approve when asked).");
            }
            0
        }
        Err(e) => fail(project, e),
    }
}

pub fn get(project: ProjectArgs, name: String) -> i32 {
    let files = match files(&project) {
        Ok(f) => f,
        Err(c) => return c,
    };
    let details = harness9::inspect::server_details(&files, &name).map(|d| {
        d.with_secrets(&files, || {
            harness9::install::Installer::for_project(&project.project)
        })
    });
    match details {
        Ok(d) if project.json => {
            crate::cli::out::json(&d);
            0
        }
        Ok(d) => {
            out!("{}", d.to_text());
            0
        }
        Err(e) => fail(&project, e),
    }
}

pub fn remove(project: ProjectArgs, name: String, scope: Option<String>) -> i32 {
    let files = match files(&project) {
        Ok(f) => f,
        Err(c) => return c,
    };
    let scope = match scope.as_deref().map(|s| scope_of(&project, s)).transpose() {
        Ok(s) => s,
        Err(c) => return c,
    };
    // What it was, for what it leaves behind (its secrets, where it came from).
    let before: Vec<(Scope, serde_json::Value)> = Scope::ALL
        .iter()
        .filter_map(|s| Some((*s, servers::entry_of(&files, *s, &name).ok()??)))
        .collect();
    match servers::remove_server(&files, &name, scope) {
        Ok((scope, path)) => {
            outln!(
                "Removed \"{name}\" from the {scope} scope ({})",
                path.display()
            );
            if let Some((_, entry)) = before.iter().find(|(s, _)| *s == scope) {
                let installer = if harness9::config::inputs::entry_inputs(entry).is_empty() {
                    harness9::install::Installer::new(
                        &project.project,
                        files.clone(),
                        harness9::trust::ApprovalStore::default_location(),
                        std::sync::Arc::new(harness9::mcp::auth::CredentialStore::memory()),
                    )
                } else {
                    harness9::install::Installer::for_project(&project.project)
                };
                for p in installer.forget_entry(scope, &name, entry) {
                    errln!("harness9: {p}");
                }
            }
            0
        }
        Err(e) => fail(&project, e),
    }
}

/// What `mcp import` was given.
pub struct ImportArgs {
    pub from: String,
    pub scope: String,
    pub dry_run: bool,
    pub on_conflict: String,
    /// Answers to the tool's inputs, `NAME=VALUE`.
    pub inputs: Vec<String>,
}

/// Asks for every input not answered yet, on a terminal (secrets without echo).
fn ask_inputs(
    questions: &[import::InputQuestion],
    answers: &mut std::collections::BTreeMap<String, String>,
) {
    use harness9::term_text::Line;
    for q in questions {
        if answers.contains_key(&q.name) {
            continue;
        }
        let about = q
            .description
            .as_deref()
            .map(|d| format!(" ({})", Line(d)))
            .unwrap_or_default();
        let choices = if q.choices.is_empty() {
            String::new()
        } else {
            format!(" one of: {}", q.choices.join(", "))
        };
        let default = q
            .default
            .as_deref()
            .map(|d| format!(" [{}]", Line(d)))
            .unwrap_or_default();
        let question = format!(
            "Input {}{about} for {}{choices}{default}: ",
            Line(&q.name),
            Line(&q.servers.join(", "))
        );
        let answer = if q.secret {
            super::prompt::secret(&question)
        } else {
            super::prompt::line(&question)
        };
        match answer {
            Some(a) if !a.is_empty() => {
                answers.insert(q.name.clone(), a);
            }
            Some(_) => {
                if let Some(d) = &q.default {
                    answers.insert(q.name.clone(), d.clone());
                }
            }
            None => return,
        }
    }
}

pub fn import(project: ProjectArgs, args: ImportArgs) -> i32 {
    let files = match files(&project) {
        Ok(f) => f,
        Err(c) => return c,
    };
    let parsed = (
        args.from.parse::<ImportSource>(),
        scope_of(&project, &args.scope),
        args.on_conflict.parse::<OnConflict>(),
    );
    let (source, scope, policy) = match parsed {
        (Ok(a), Ok(b), Ok(c)) => (a, b, c),
        (Err(e), _, _) | (_, _, Err(e)) => {
            crate::cli::out::failure(project.json, e.code(), &e.to_string());
            return EXIT_USAGE;
        }
        (_, Err(c), _) => return c,
    };
    let (mut found, errors) = import::find(source, &project.project, &Places::of_user());
    let mut answers = std::collections::BTreeMap::new();
    for item in &args.inputs {
        match item.split_once('=') {
            Some((k, v)) if !k.is_empty() => {
                answers.insert(k.to_string(), v.to_string());
            }
            _ => {
                let message = format!("--input \"{item}\" is not NAME=VALUE");
                crate::cli::out::failure(project.json, "invalid-value", &message);
                return EXIT_USAGE;
            }
        }
    }
    // The tool's inputs are asked before the plan is shown, so that the user confirms the
    // entries with their values in.
    if super::prompt::interactive() && !project.yes && !args.dry_run {
        ask_inputs(&import::questions(&found), &mut answers);
    }
    import::answer(&mut found, &answers);
    for e in &errors {
        errln!("harness9: skipped {e}");
    }
    if found.is_empty() {
        if errors.is_empty() {
            errln!(
                "harness9: no {} MCP servers found on this machine",
                source.title()
            );
        }
        return EXIT_FAILED;
    }
    let plan = match import::plan(&files, scope, &found, policy) {
        Ok(p) => p,
        Err(e) => {
            crate::cli::out::failure(project.json, e.code(), &e.to_string());
            return EXIT_FAILED;
        }
    };
    if project.json {
        crate::cli::out::json(&plan);
    } else {
        out!("{}", plan.to_text(args.dry_run));
    }
    if args.dry_run {
        if !project.json {
            outln!("Dry run: nothing was written.");
        }
        return 0;
    }
    if plan.confirm && !project.yes && !confirmed_at_terminal() {
        errln!("harness9: these servers come from a file inside the project, which arrived with it; nothing was written. Check what they run (above), then run again with --yes to add them");
        return EXIT_FAILED;
    }
    if let Err(e) = import::write(&plan) {
        errln!("harness9: {e}");
        return EXIT_FAILED;
    }
    // What was shown and accepted is approved as written: a later change asks again.
    let store = harness9::trust::approvals::ApprovalStore::default_location();
    if let Err(e) = store.approve_import(&plan, &project.project, scope) {
        errln!("harness9: the servers were added, but their approval could not be recorded ({e}); you will be asked when they start");
    }
    if !plan.inputs.is_empty() && !plan.added.is_empty() {
        let installer = harness9::install::Installer::for_project(&project.project);
        for n in installer.keep_import_inputs(&plan, scope, &answers) {
            if !project.json {
                outln!("Note: {}", harness9::term_text::Line(&n));
            }
        }
    }
    0
}

/// Asks on a terminal whether to add servers from a file inside the project; `false`
/// without a terminal (the caller then refuses and names `--yes`).
fn confirmed_at_terminal() -> bool {
    use std::io::{BufRead, IsTerminal, Write};
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return false;
    }
    let mut err = std::io::stderr();
    let _ = write!(
        err,
        "These servers come from a file inside the project and will run on this machine. Add them? [y/N] "
    );
    let _ = err.flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}
