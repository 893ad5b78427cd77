//! From the way chosen ([`super::choose`]) to the entry that runs it: the pinned command
//! line, and the variables to ask.
//!
//! The command is ours, never the record's: npm packages run with `npx -y pkg@1.2.3`, PyPI
//! packages with `uvx pkg==1.2.3`, OCI images with `docker run -i --rm … image:tag`,
//! NuGet packages with `dnx Pkg@1.2.3 --yes -- …`; a record's `runtimeHint` is shown, not
//! run. Everything of the record that reaches the entry is checked first: identifiers and
//! versions against their registry's syntax (nothing that could pose as an option), no
//! control characters, no `${…}` (harness9 would fill it from its own environment),
//! bounded lengths and counts. What passes is written exactly as shown; runtime arguments
//! (options to the runner itself) and risky environment names are shown with a warning.

use std::collections::BTreeMap;
use std::ffi::OsStr;

use serde::{Deserialize, Serialize};

use super::choose::{find_on_path, refused, PackageKind, Way};
use super::record::{Argument, Input, KeyValueInput, Package, Remote, ServerRecord};
use super::syntax::{
    env_name_ok, header_name_ok, npm_name_ok, nuget_name_ok, oci_has_tag, oci_ref_ok, pypi_name_ok,
    version_ok,
};
use super::template::{ArgGroup, Seg, Template, Text};
use super::InstallError;
use crate::config::inputs::is_input_name;

/// Longest text of a record that goes into an entry (an argument, a value, a URL).
pub const MAX_TEXT: usize = 2048;
/// Most arguments, environment variables or headers one record may add.
pub const MAX_ITEMS: usize = 64;

/// Where a variable goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum VariableKind {
    Env,
    Header,
    Argument,
    Url,
}

/// A value the user gives (or takes the default of).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PlanVariable {
    pub name: String,
    pub kind: VariableKind,
    pub description: Option<String>,
    pub required: bool,
    /// Kept in the credential store; the entry holds `${input:NAME}`.
    pub secret: bool,
    pub default: Option<String>,
    pub choices: Vec<String>,
    /// `string`, `number`, `boolean` or `filepath`; a bundle's `directory` or `file` is a
    /// path the user picks (an absolute one).
    pub format: Option<String>,
    pub placeholder: Option<String>,
    /// Bounds of a `number`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub max: Option<f64>,
    /// Several values (paths), one a line; `default` too.
    #[serde(default)]
    pub multiple: bool,
}

/// What was chosen, and how it runs.
#[derive(Debug, Clone)]
pub struct Built {
    pub template: Template,
    pub variables: Vec<PlanVariable>,
    pub warnings: Vec<String>,
    /// The package used (`None`: a remote).
    pub package: Option<PackageKind>,
}

/// Environment variables that change how any program runs; a record setting one is
/// shown with a warning.
const RISKY_ENV: &[&str] = &[
    "PATH",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "NODE_OPTIONS",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "BASH_ENV",
    "ENV",
];

/// Builds the entry's template and variables for the way chosen.
pub fn build(
    record: &ServerRecord,
    way: Way<'_>,
    path: Option<&OsStr>,
) -> Result<Built, InstallError> {
    let mut b = Builder {
        record,
        variables: Vec::new(),
        warnings: Vec::new(),
        items: 0,
    };
    let template = match way {
        Way::Package(kind, p) => b.package(kind, p, path)?,
        Way::Remote(r) => b.remote(r)?,
    };
    Ok(Built {
        template,
        variables: b.variables,
        warnings: b.warnings,
        package: match way {
            Way::Package(k, _) => Some(k),
            Way::Remote(_) => None,
        },
    })
}

struct Builder<'r> {
    record: &'r ServerRecord,
    variables: Vec<PlanVariable>,
    warnings: Vec<String>,
    items: usize,
}

impl Builder<'_> {
    /// A record's text that goes into the entry, checked.
    fn checked(&self, what: &str, s: &str) -> Result<String, InstallError> {
        if s.chars().count() > MAX_TEXT {
            return Err(refused(
                self.record,
                format!("{what} is longer than {MAX_TEXT} characters"),
            ));
        }
        if s.chars().any(char::is_control) {
            return Err(refused(
                self.record,
                format!(
                    "{what} holds control characters ({})",
                    crate::term_text::line(s)
                ),
            ));
        }
        if s.contains("${") {
            return Err(refused(
                self.record,
                format!("{what} (\"{}\") holds a ${{…}} reference, which harness9 would fill from its own environment", crate::term_text::line(s)),
            ));
        }
        Ok(s.to_string())
    }

    fn count(&mut self) -> Result<(), InstallError> {
        self.items += 1;
        if self.items > MAX_ITEMS * 3 {
            return Err(refused(
                self.record,
                format!(
                    "it has more than {} arguments, variables and headers",
                    MAX_ITEMS * 3
                ),
            ));
        }
        Ok(())
    }

    /// Adds (or merges into) a variable.
    fn variable(
        &mut self,
        name: &str,
        kind: VariableKind,
        input: &Input,
    ) -> Result<(), InstallError> {
        if !is_input_name(name) {
            return Err(refused(
                self.record,
                format!(
                    "variable name \"{}\" is not 1 to 64 letters, digits, '_' and '-'",
                    crate::term_text::line(name)
                ),
            ));
        }
        let text = |s: &Option<String>| {
            s.as_ref()
                .map(|s| crate::truncate::prefix(s, MAX_TEXT).to_string())
        };
        if let Some(d) = &input.default {
            self.checked(&format!("the default of \"{name}\""), d)?;
        }
        for c in &input.choices {
            self.checked(&format!("a choice of \"{name}\""), c)?;
        }
        if let Some(v) = self.variables.iter_mut().find(|v| v.name == name) {
            v.required |= input.is_required;
            v.secret |= input.is_secret;
            if v.description.is_none() {
                v.description = text(&input.description);
            }
            if v.default.is_none() {
                v.default = input.default.clone();
            }
            return Ok(());
        }
        if self.variables.len() >= MAX_ITEMS {
            return Err(refused(
                self.record,
                format!("it asks for more than {MAX_ITEMS} values"),
            ));
        }
        self.variables.push(PlanVariable {
            name: name.to_string(),
            kind,
            description: text(&input.description),
            required: input.is_required,
            secret: input.is_secret,
            default: input.default.clone(),
            choices: input.choices.iter().take(MAX_ITEMS).cloned().collect(),
            format: text(&input.format),
            placeholder: text(&input.placeholder),
            min: None,
            max: None,
            multiple: false,
        });
        Ok(())
    }

    /// A fixed value with `{name}` parts taken from `variables` (asked for).
    fn value_text(
        &mut self,
        what: &str,
        value: &str,
        variables: &BTreeMap<String, Input>,
        kind: VariableKind,
    ) -> Result<Text, InstallError> {
        let value = self.checked(what, value)?;
        let mut out: Text = Vec::new();
        let mut lit = String::new();
        let mut rest = value.as_str();
        while let Some(open) = rest.find('{') {
            let (before, after) = rest.split_at(open);
            lit.push_str(before);
            let name_end = after.find('}');
            let name = name_end.and_then(|e| after.get(1..e));
            match (name, name_end) {
                (Some(n), Some(e)) if variables.contains_key(n) => {
                    if !lit.is_empty() {
                        out.push(Seg::Text(std::mem::take(&mut lit)));
                    }
                    self.variable(n, kind, &variables[n])?;
                    out.push(Seg::Var(n.to_string()));
                    rest = after.get(e + 1..).unwrap_or("");
                }
                _ => {
                    lit.push('{');
                    rest = after.get(1..).unwrap_or("");
                }
            }
        }
        lit.push_str(rest);
        if !lit.is_empty() {
            out.push(Seg::Text(lit));
        }
        Ok(out)
    }

    /// One argument of the record as an argument group.
    fn argument(&mut self, a: &Argument, index: usize) -> Result<Option<ArgGroup>, InstallError> {
        self.count()?;
        let text = |s: &str| vec![Seg::Text(s.to_string())];
        match a.kind.as_str() {
            "positional" | "" => {
                if let Some(v) = &a.input.value {
                    let t =
                        self.value_text("an argument", v, &a.variables, VariableKind::Argument)?;
                    return Ok(Some(ArgGroup {
                        parts: vec![t],
                        spread: false,
                    }));
                }
                let hint = a
                    .value_hint
                    .clone()
                    .unwrap_or_else(|| format!("arg{index}"));
                self.variable(&hint, VariableKind::Argument, &a.input)?;
                Ok(Some(ArgGroup {
                    parts: vec![vec![Seg::Var(hint)]],
                    spread: false,
                }))
            }
            "named" => {
                let Some(name) = &a.name else {
                    return Err(refused(self.record, "a named argument has no name".into()));
                };
                let name = self.checked("an argument's name", name)?;
                if !name.starts_with('-') || name.contains(char::is_whitespace) {
                    return Err(refused(
                        self.record,
                        format!("the named argument \"{name}\" is not a --flag"),
                    ));
                }
                if let Some(v) = &a.input.value {
                    let t =
                        self.value_text("an argument", v, &a.variables, VariableKind::Argument)?;
                    return Ok(Some(ArgGroup {
                        parts: vec![text(&name), t],
                        spread: false,
                    }));
                }
                let var = name.trim_start_matches('-').to_string();
                self.variable(&var, VariableKind::Argument, &a.input)?;
                Ok(Some(ArgGroup {
                    parts: vec![text(&name), vec![Seg::Var(var)]],
                    spread: false,
                }))
            }
            other => Err(refused(
                self.record,
                format!(
                    "an argument has the unknown type \"{}\"",
                    crate::term_text::line(other)
                ),
            )),
        }
    }

    fn arguments(&mut self, list: &[Argument]) -> Result<Vec<ArgGroup>, InstallError> {
        if list.len() > MAX_ITEMS {
            return Err(refused(
                self.record,
                format!("it has more than {MAX_ITEMS} arguments"),
            ));
        }
        let mut out = Vec::new();
        for (i, a) in list.iter().enumerate() {
            out.extend(self.argument(a, i + 1)?);
        }
        Ok(out)
    }

    /// Environment variables or headers.
    fn pairs(
        &mut self,
        list: &[KeyValueInput],
        kind: VariableKind,
    ) -> Result<Vec<(String, Text)>, InstallError> {
        if list.len() > MAX_ITEMS {
            return Err(refused(
                self.record,
                format!("it has more than {MAX_ITEMS} variables or headers"),
            ));
        }
        let mut out: Vec<(String, Text)> = Vec::new();
        for kv in list {
            self.count()?;
            let ok = match kind {
                VariableKind::Header => header_name_ok(&kv.name),
                _ => env_name_ok(&kv.name),
            };
            if !ok {
                return Err(refused(
                    self.record,
                    format!(
                        "\"{}\" is not a valid name",
                        crate::term_text::line(&kv.name)
                    ),
                ));
            }
            if kind == VariableKind::Env && RISKY_ENV.contains(&kv.name.as_str()) {
                self.warnings.push(format!(
                    "the record sets {}, which changes how the program runs",
                    kv.name
                ));
            }
            let t = match &kv.input.value {
                Some(v) => {
                    self.value_text(&format!("the value of {}", kv.name), v, &kv.variables, kind)?
                }
                None => {
                    self.variable(&kv.name, kind, &kv.input)?;
                    vec![Seg::Var(kv.name.clone())]
                }
            };
            if !out.iter().any(|(k, _)| k == &kv.name) {
                out.push((kv.name.clone(), t));
            }
        }
        Ok(out)
    }

    fn package(
        &mut self,
        kind: PackageKind,
        p: &Package,
        path: Option<&OsStr>,
    ) -> Result<Template, InstallError> {
        let id = p.identifier.as_str();
        let id_ok = match kind {
            PackageKind::Npm => npm_name_ok(id),
            PackageKind::Pypi => pypi_name_ok(id),
            PackageKind::Oci => oci_ref_ok(id),
            PackageKind::Nuget => nuget_name_ok(id),
            PackageKind::Mcpb => {
                return Err(InstallError::BundlesNotYet {
                    what: format!("the mcpb package of \"{}\"", self.record.name),
                })
            }
        };
        if !id_ok {
            return Err(refused(
                self.record,
                format!(
                    "its {} package name \"{}\" is not a valid {} name",
                    kind.word(),
                    crate::term_text::line(id),
                    kind.word()
                ),
            ));
        }
        if let Some(t) = &p.transport {
            if !t.kind.is_empty() && t.kind != "stdio" {
                return Err(refused(
                    self.record,
                    format!(
                        "its {} package serves MCP over {}; harness9 runs packages over stdio (choose a remote with --remote, or another package)",
                        kind.word(),
                        crate::term_text::line(&t.kind)
                    ),
                ));
            }
        }
        let version = match (&p.version, kind) {
            (Some(v), _) if !v.is_empty() => {
                if !version_ok(v) {
                    return Err(refused(
                        self.record,
                        format!(
                            "its package version \"{}\" is not one exact version",
                            crate::term_text::line(v)
                        ),
                    ));
                }
                Some(v.clone())
            }
            (_, PackageKind::Oci) if oci_has_tag(id) => None,
            _ => {
                return Err(refused(
                    self.record,
                    format!(
                        "its {} package names no version; harness9 installs pinned versions only",
                        kind.word()
                    ),
                ))
            }
        };
        let pinned = match (kind, &version) {
            (PackageKind::Npm | PackageKind::Nuget, Some(v)) => format!("{id}@{v}"),
            (PackageKind::Pypi, Some(v)) => format!("{id}=={v}"),
            (PackageKind::Oci, Some(v)) if !oci_has_tag(id) => format!("{id}:{v}"),
            _ => id.to_string(),
        };
        if let Some(h) = &p.runtime_hint {
            if h != kind.runner() {
                self.warnings.push(format!(
                    "the record suggests running it with \"{}\"; harness9 runs {} packages with {}",
                    crate::term_text::line(h),
                    kind.word(),
                    kind.runner()
                ));
            }
        }
        if find_on_path(kind.runner(), path).is_none() {
            self.warnings.push(format!(
                "{} is not on the servers' PATH; install {} before the server can start",
                kind.runner(),
                kind.runner_from()
            ));
        }
        let lit = |s: &str| ArgGroup {
            parts: vec![vec![Seg::Text(s.to_string())]],
            spread: false,
        };
        let runtime = self.arguments(&p.runtime_arguments)?;
        if !runtime.is_empty() {
            let shown: Vec<String> = runtime
                .iter()
                .flat_map(|g| &g.parts)
                .map(|t| {
                    t.iter()
                        .map(|s| match s {
                            Seg::Text(t) => t.clone(),
                            Seg::Var(v) => format!("<{v}>"),
                        })
                        .collect::<String>()
                })
                .collect();
            self.warnings.push(format!(
                "the record passes options to {} itself: {}; check them",
                kind.runner(),
                crate::term_text::line(&shown.join(" "))
            ));
        }
        let package_args = self.arguments(&p.package_arguments)?;
        let env = self.pairs(&p.environment_variables, VariableKind::Env)?;
        let mut args: Vec<ArgGroup> = Vec::new();
        match kind {
            PackageKind::Npm => {
                let has_yes = runtime.iter().any(|g| {
                    g.parts.iter().any(|t| {
                        t == &vec![Seg::Text("-y".into())] || t == &vec![Seg::Text("--yes".into())]
                    })
                });
                if !has_yes {
                    args.push(lit("-y"));
                }
                args.extend(runtime);
                args.push(lit(&pinned));
                args.extend(package_args);
            }
            PackageKind::Pypi => {
                args.extend(runtime);
                args.push(lit(&pinned));
                args.extend(package_args);
            }
            PackageKind::Oci => {
                args.extend(["run", "-i", "--rm"].map(lit));
                // The container sees only the variables passed in by name (their values
                // stay in docker's environment, out of its command line).
                for (name, _) in &env {
                    args.push(ArgGroup {
                        parts: vec![vec![Seg::Text("-e".into())], vec![Seg::Text(name.clone())]],
                        spread: false,
                    });
                }
                args.extend(runtime);
                args.push(lit(&pinned));
                args.extend(package_args);
            }
            PackageKind::Nuget => {
                args.extend(runtime);
                args.push(lit(&pinned));
                args.push(lit("--yes"));
                if !package_args.is_empty() {
                    args.push(lit("--"));
                    args.extend(package_args);
                }
            }
            PackageKind::Mcpb => unreachable!("refused above"),
        }
        Ok(Template::Stdio {
            command: kind.runner().to_string(),
            args,
            env,
            cwd: None,
        })
    }

    fn remote(&mut self, r: &Remote) -> Result<Template, InstallError> {
        let url = self.value_text("the remote's URL", &r.url, &r.variables, VariableKind::Url)?;
        // Variables of the URL must have a value: a URL cannot leave a part out.
        for v in &mut self.variables {
            if v.kind == VariableKind::Url {
                v.required = true;
            }
        }
        let probe: String = url
            .iter()
            .map(|s| match s {
                Seg::Text(t) => t.as_str(),
                Seg::Var(_) => "x",
            })
            .collect();
        if let Err(e) = crate::config::servers::check_url(&probe) {
            return Err(refused(self.record, format!("its remote URL: {e}")));
        }
        let headers = self.pairs(&r.headers, VariableKind::Header)?;
        let plain_http = url::Url::parse(&probe).is_ok_and(|u| {
            u.scheme() == "http"
                && !matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"))
        });
        if plain_http {
            self.warnings.push(
                "the remote is plain http: what is sent to it (headers too) is not encrypted"
                    .into(),
            );
        }
        match r.kind.as_str() {
            "streamable-http" | "http" | "streamableHttp" => Ok(Template::Http { url, headers }),
            "sse" => Ok(Template::Sse { url, headers }),
            other => Err(refused(
                self.record,
                format!(
                    "its remote has the unknown transport \"{}\"",
                    crate::term_text::line(other)
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests;
