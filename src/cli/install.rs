//! `harness9 mcp search | install | outdated | update | secret`: servers from MCP
//! registries, and the values of entries' `${input:NAME}` references. Each is a call into
//! the install service ([`harness9::install::Installer`]); this file asks the questions
//! and prints.

use std::collections::BTreeMap;

use harness9::config::Scope;
use harness9::install::{
    sources, Answers, BundleInstall, Choice, InstallError, InstallPlan, InstallTarget, Installer,
    PackageKind, RegistryInstall,
};
use harness9::term_text::Line;

use super::{prompt, EXIT_FAILED, EXIT_USAGE};
use crate::ProjectArgs;

fn fail(project: &ProjectArgs, e: &InstallError) -> i32 {
    crate::cli::out::failure(project.json, e.code(), &e.to_string());
    if e.is_usage() {
        EXIT_USAGE
    } else {
        EXIT_FAILED
    }
}

fn project_ok(project: &ProjectArgs) -> Result<(), i32> {
    if project.project.is_dir() {
        return Ok(());
    }
    let message = format!(
        "project folder \"{}\" does not exist",
        project.project.display()
    );
    crate::cli::out::failure(project.json, "no-project-folder", &message);
    Err(EXIT_USAGE)
}

fn registries(project: &ProjectArgs, flag: Option<&str>) -> Result<Vec<String>, i32> {
    sources::registries(flag).map_err(|e| fail(project, &InstallError::Source(e)))
}

/// At most `n` characters of one line of `s`, with `…` when cut.
fn cut(s: &str, n: usize) -> String {
    let first = s.lines().next().unwrap_or("");
    if first.chars().count() <= n && !s.contains('\n') {
        return first.to_string();
    }
    let mut out: String = first.chars().take(n.saturating_sub(1)).collect();
    out.push('…');
    out
}

pub async fn search(
    project: ProjectArgs,
    query: Option<String>,
    limit: Option<usize>,
    registry: Option<String>,
) -> i32 {
    let registries = match registries(&project, registry.as_deref()) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let query = query.unwrap_or_default();
    let installer = Installer::for_project(&project.project);
    let results = installer.search(&registries, &query, limit).await;
    for n in &results.notes {
        errln!("harness9: {}", Line(n));
    }
    for p in &results.problems {
        errln!("harness9: {}", Line(&p.message));
    }
    if results.unreadable > 0 {
        errln!(
            "harness9: {} listed item(s) were not server records and are left out",
            results.unreadable
        );
    }
    if project.json {
        crate::cli::out::json(&results);
    } else if results.hits.is_empty() {
        if results.problems.len() < registries.len() {
            outln!(
                "No server matches \"{}\" in {}",
                Line(&query),
                registries.join(", ")
            );
        }
    } else {
        let several = registries.len() > 1;
        let name_w = results
            .hits
            .iter()
            .map(|h| h.name.chars().count().min(60))
            .max()
            .unwrap_or(4)
            .max(4);
        let runs: Vec<String> = results
            .hits
            .iter()
            .map(|h| cut(&h.runs.join(" "), 40))
            .collect();
        let runs_w = runs
            .iter()
            .map(|r| r.chars().count())
            .max()
            .unwrap_or(4)
            .max(4);
        let ver_w = results
            .hits
            .iter()
            .map(|h| h.version.chars().count().min(20))
            .max()
            .unwrap_or(7)
            .max(7);
        let reg_w = if several {
            results
                .hits
                .iter()
                .map(|h| h.registry.chars().count())
                .max()
                .unwrap_or(8)
                .max(8)
        } else {
            0
        };
        let reg_head = if several {
            format!("{:<reg_w$}  ", "REGISTRY")
        } else {
            String::new()
        };
        outln!(
            "{:<name_w$}  {:<ver_w$}  {:<runs_w$}  {reg_head}DESCRIPTION",
            "NAME",
            "VERSION",
            "RUNS"
        );
        for (h, r) in results.hits.iter().zip(&runs) {
            let about = match &h.title {
                Some(t) if !t.is_empty() => format!("{t}: {}", h.description),
                _ => h.description.clone(),
            };
            let status = match h.status.as_deref() {
                Some(s) if s != "active" => format!(" [{s}]"),
                _ => String::new(),
            };
            let reg = if several {
                format!("{:<reg_w$}  ", Line(&h.registry))
            } else {
                String::new()
            };
            outln!(
                "{:<name_w$}  {:<ver_w$}  {:<runs_w$}  {reg}{}{status}",
                Line(&cut(&h.name, 60)),
                Line(&cut(&h.version, 20)),
                Line(r),
                Line(&cut(&about, 80)),
            );
        }
    }
    if results.hits.is_empty() && !results.problems.is_empty() {
        EXIT_FAILED
    } else {
        0
    }
}

/// What `mcp install` was given.
pub struct InstallArgs {
    pub target: String,
    /// `None`: local, or user for a bundle.
    pub scope: Option<String>,
    /// A bundle's `user_config` values, `KEY=VALUE`.
    pub config: Vec<String>,
    pub name: Option<String>,
    pub values: Vec<String>,
    pub package: Option<String>,
    pub remote: bool,
    pub registry: Option<String>,
    pub dry_run: bool,
}

/// `KEY=VALUE` pairs of `--config`; a key given several times has several values (one a
/// line, as a bundle's `multiple` field takes them).
fn parse_config(project: &ProjectArgs, items: &[String]) -> Result<Answers, i32> {
    let mut out: Answers = BTreeMap::new();
    for item in items {
        match item.split_once('=') {
            Some((k, v)) if !k.is_empty() => {
                out.entry(k.to_string())
                    .and_modify(|x| {
                        x.push('\n');
                        x.push_str(v);
                    })
                    .or_insert_with(|| v.to_string());
            }
            _ => {
                let message =
                    format!("--config \"{item}\" is not KEY=VALUE, e.g. --config api_key=abc123");
                crate::cli::out::failure(project.json, "invalid-value", &message);
                return Err(EXIT_USAGE);
            }
        }
    }
    Ok(out)
}

/// `NAME=VALUE` pairs of `-e`.
fn parse_values(project: &ProjectArgs, items: &[String]) -> Result<Answers, i32> {
    let mut out = BTreeMap::new();
    for item in items {
        match item.split_once('=') {
            Some((k, v)) if !k.is_empty() => {
                out.insert(k.to_string(), v.to_string());
            }
            _ => {
                let message = format!("-e \"{item}\" is not NAME=VALUE, e.g. -e API_KEY=abc123");
                crate::cli::out::failure(project.json, "invalid-value", &message);
                return Err(EXIT_USAGE);
            }
        }
    }
    Ok(out)
}

/// What separates several paths typed on one line.
const PATHS_SEPARATOR: &str = " | ";

/// Paths a bundle asks for, made absolute (`~/` is the home folder; a relative path is
/// taken from the current folder), one a line.
fn absolute_paths(plan: &InstallPlan, answers: &mut Answers) {
    for v in &plan.variables {
        if !matches!(v.format.as_deref(), Some("directory" | "file")) {
            continue;
        }
        let Some(a) = answers.get_mut(&v.name) else {
            continue;
        };
        let sep = harness9::install::template::SEPARATOR;
        *a = a
            .split(sep)
            .map(|p| {
                let p = match (p.strip_prefix("~/"), dirs::home_dir()) {
                    (Some(rest), Some(home)) => home.join(rest),
                    _ => std::path::PathBuf::from(p),
                };
                std::path::absolute(&p).unwrap_or(p).display().to_string()
            })
            .collect::<Vec<_>>()
            .join(&sep.to_string());
    }
}

/// Asks on the terminal for every value not given yet (secrets without echo). Without a
/// terminal, or with `--yes`, nothing is asked: defaults stand.
fn ask_values(plan: &InstallPlan, answers: &mut Answers, ask: bool) {
    if !ask {
        return;
    }
    for v in &plan.variables {
        if answers.contains_key(&v.name) {
            continue;
        }
        let about = v
            .description
            .as_deref()
            .map(|d| format!(" ({})", Line(&cut(d, 100))))
            .unwrap_or_default();
        let choices = if v.choices.is_empty() {
            String::new()
        } else {
            format!(" one of: {}", v.choices.join(", "))
        };
        let current = if v.secret && plan.kept_secrets.contains(&v.name) {
            " [kept; Enter keeps it]".to_string()
        } else {
            match plan.values.get(&v.name).or(v.default.as_ref()) {
                Some(d) => format!(" [{}]", Line(d)),
                None if v.required => " (required)".to_string(),
                None => " (optional; Enter leaves it out)".to_string(),
            }
        };
        let path = match v.format.as_deref() {
            Some(f @ ("directory" | "file")) if v.multiple => {
                format!(" ({f} paths, separated by \"{PATHS_SEPARATOR}\")")
            }
            Some(f @ ("directory" | "file")) => format!(" ({f} path)"),
            _ => String::new(),
        };
        let current = current.replace(harness9::install::template::SEPARATOR, PATHS_SEPARATOR);
        let question = format!("{}{about}{path}{choices}{current}: ", Line(&v.name));
        let answer = if v.secret {
            prompt::secret(&question)
        } else {
            prompt::line(&question)
        };
        let answer = answer.map(|a| {
            if v.multiple {
                a.split(PATHS_SEPARATOR)
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>()
                    .join(&harness9::install::template::SEPARATOR.to_string())
            } else {
                a
            }
        });
        match answer {
            Some(a) if !a.is_empty() => {
                answers.insert(v.name.clone(), a);
            }
            Some(_) => {}
            None => return,
        }
    }
}

/// Fills, shows, confirms and commits a plan; prints what was written.
fn show_and_commit(
    project: &ProjectArgs,
    installer: &Installer,
    plan: &InstallPlan,
    mut answers: Answers,
    dry_run: bool,
) -> i32 {
    let ask = prompt::interactive() && !project.yes && !dry_run;
    ask_values(plan, &mut answers, ask);
    absolute_paths(plan, &mut answers);
    let filled = match if dry_run {
        plan.fill_partly(&answers)
    } else {
        plan.fill(&answers)
    } {
        Ok(f) => f,
        Err(e) => return fail(project, &e),
    };
    if !project.json {
        out!("{}", filled.to_text());
    }
    if dry_run {
        if project.json {
            crate::cli::out::json(&serde_json::json!({"plan": filled}));
        } else {
            outln!("Dry run: nothing was written.");
        }
        return 0;
    }
    if !project.yes {
        if !prompt::interactive() {
            let message =
                "nothing was written: check the entry above, then run again with --yes to write it";
            crate::cli::out::failure(project.json, "not-confirmed", message);
            return EXIT_FAILED;
        }
        if !prompt::yes("Write this entry?") {
            errln!("harness9: nothing was written");
            return EXIT_FAILED;
        }
    }
    match installer.commit(plan, &answers, &filled.digest) {
        Ok(done) => {
            if project.json {
                crate::cli::out::json(&serde_json::json!({"plan": filled, "installed": done}));
            } else {
                let verb = if done.replaced { "Updated" } else { "Added" };
                outln!(
                    "{verb} server \"{}\" in the {} scope ({})",
                    Line(&done.name),
                    done.scope,
                    Line(&done.path)
                );
                if !done.secrets.is_empty() {
                    outln!(
                        "Secrets kept in {}: {}",
                        Line(&done.secrets_in),
                        done.secrets.join(", ")
                    );
                }
                for n in &done.notes {
                    outln!("Note: {}", Line(n));
                }
                if done.scope == Scope::Project {
                    outln!("It is approved as shown; a later change to it needs approval again.");
                }
            }
            for w in &done.warnings {
                errln!("harness9: {}", Line(w));
            }
            0
        }
        Err(e) => fail(project, &e),
    }
}

pub async fn install(project: ProjectArgs, args: InstallArgs) -> i32 {
    if let Err(c) = project_ok(&project) {
        return c;
    }
    let target = InstallTarget::parse(&args.target);
    let default_scope = match target {
        InstallTarget::Bundle(_) => "user",
        InstallTarget::Registry { .. } => crate::cli::servers::DEFAULT_SCOPE,
    };
    let scope = match args
        .scope
        .as_deref()
        .unwrap_or(default_scope)
        .parse::<Scope>()
    {
        Ok(s) => s,
        Err(e) => {
            crate::cli::out::failure(project.json, e.code(), &e.to_string());
            return EXIT_USAGE;
        }
    };
    let choice = match (args.package.as_deref(), args.remote) {
        (Some(p), _) => match PackageKind::of(p) {
            Some(k) => Choice::Package(k),
            None => {
                let message =
                    format!("unknown package type \"{p}\"; use npm, pypi, oci, nuget or mcpb");
                crate::cli::out::failure(project.json, "unknown-package-type", &message);
                return EXIT_USAGE;
            }
        },
        (None, true) => Choice::Remote,
        (None, false) => Choice::Auto,
    };
    let mut answers = match parse_values(&project, &args.values) {
        Ok(a) => a,
        Err(c) => return c,
    };
    let (name, version) = match target {
        InstallTarget::Bundle(path) => {
            match parse_config(&project, &args.config) {
                Ok(c) => answers.extend(c),
                Err(c) => return c,
            }
            let installer = Installer::for_project(&project.project);
            let plan = installer
                .plan_bundle(&BundleInstall {
                    path,
                    local_name: args.name,
                    scope,
                })
                .await;
            return match plan {
                Ok(plan) => show_and_commit(&project, &installer, &plan, answers, args.dry_run),
                Err(e) => fail(&project, &e),
            };
        }
        InstallTarget::Registry { name, version } => (name, version),
    };
    if !args.config.is_empty() {
        let message =
            "--config gives a bundle's values; a registry server's are given with -e NAME=VALUE";
        crate::cli::out::failure(project.json, "config-for-bundles", message);
        return EXIT_USAGE;
    }
    let registries = match registries(&project, args.registry.as_deref()) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let installer = Installer::for_project(&project.project);
    let plan = installer
        .plan(&RegistryInstall {
            name,
            version,
            local_name: args.name,
            scope,
            choice,
            registries,
        })
        .await;
    let plan = match plan {
        Ok(p) => p,
        Err(e) => return fail(&project, &e),
    };
    show_and_commit(&project, &installer, &plan, answers, args.dry_run)
}

pub async fn outdated(project: ProjectArgs) -> i32 {
    if let Err(c) = project_ok(&project) {
        return c;
    }
    let installer = Installer::for_project(&project.project);
    let report = installer.outdated().await;
    for n in &report.notes {
        errln!("harness9: {}", Line(n));
    }
    for p in &report.problems {
        errln!("harness9: {}", Line(&p.message));
    }
    if project.json {
        crate::cli::out::json(&report);
    } else if report.checked == 0 {
        outln!("No server here was installed from a registry.");
    } else if report.outdated.is_empty() {
        outln!(
            "All {} server(s) installed from a registry are up to date.",
            report.checked
        );
    } else {
        let w = report
            .outdated
            .iter()
            .map(|o| o.server.chars().count())
            .max()
            .unwrap_or(4)
            .max(4);
        outln!(
            "{:<w$}  {:<7}  {:<12}  {:<12}  FROM",
            "NAME",
            "SCOPE",
            "INSTALLED",
            "LATEST"
        );
        for o in &report.outdated {
            outln!(
                "{:<w$}  {:<7}  {:<12}  {:<12}  {} ({})",
                Line(&o.server),
                o.scope.word(),
                Line(&o.installed),
                Line(&o.latest),
                Line(&o.name),
                Line(&o.registry)
            );
        }
        outln!(
            "Update one with `harness9 mcp update NAME` (it shows the new command and asks first)."
        );
    }
    if report.problems.is_empty() {
        0
    } else {
        EXIT_FAILED
    }
}

pub async fn update(
    project: ProjectArgs,
    server: String,
    values: Vec<String>,
    scope: Option<String>,
) -> i32 {
    if let Err(c) = project_ok(&project) {
        return c;
    }
    let scope = match scope.as_deref().map(str::parse::<Scope>).transpose() {
        Ok(s) => s,
        Err(e) => {
            crate::cli::out::failure(project.json, e.code(), &e.to_string());
            return EXIT_USAGE;
        }
    };
    let answers = match parse_values(&project, &values) {
        Ok(a) => a,
        Err(c) => return c,
    };
    let installer = Installer::for_project(&project.project);
    let plan = match installer.plan_update(&server, scope).await {
        Ok(p) => p,
        Err(e) => return fail(&project, &e),
    };
    let current = plan.replaces.as_ref().and_then(|r| r.version.clone());
    if current.as_deref() == Some(plan.source.version.as_str()) {
        if project.json {
            crate::cli::out::json(
                &serde_json::json!({"upToDate": true, "version": plan.source.version}),
            );
        } else {
            outln!(
                "\"{}\" is at the latest version ({}) of {}",
                Line(&server),
                Line(&plan.source.version),
                Line(&plan.source.name)
            );
        }
        return 0;
    }
    show_and_commit(&project, &installer, &plan, answers, false)
}

/// `mcp secret set|remove SERVER NAME`.
pub async fn secret(project: ProjectArgs, server: String, name: String, remove: bool) -> i32 {
    if let Err(c) = project_ok(&project) {
        return c;
    }
    let installer = Installer::for_project(&project.project);
    if remove {
        return match installer.remove_secret(&server, &name) {
            Ok((scope, true)) => {
                outln!(
                    "Removed the value of {} of \"{}\" ({scope} scope)",
                    Line(&name),
                    Line(&server)
                );
                0
            }
            Ok((scope, false)) => {
                outln!(
                    "No value was kept for {} of \"{}\" ({scope} scope)",
                    Line(&name),
                    Line(&server)
                );
                0
            }
            Err(e) => fail(&project, &e),
        };
    }
    let value = if prompt::interactive() {
        prompt::secret(&format!(
            "Value of {} for \"{}\": ",
            Line(&name),
            Line(&server)
        ))
    } else {
        // A script pipes the value in: the first line of stdin.
        prompt::line("")
    };
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        let message = "no value given (type it when asked, or pipe it on stdin)";
        crate::cli::out::failure(project.json, "empty-value", message);
        return EXIT_USAGE;
    };
    match installer.set_secret(&server, &name, &value) {
        Ok(scope) => {
            outln!(
                "Kept the value of {} of \"{}\" ({scope} scope) in {}",
                Line(&name),
                Line(&server),
                Line(&installer.secrets().location())
            );
            0
        }
        Err(e) => fail(&project, &e),
    }
}
