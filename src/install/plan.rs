//! An install plan: the exact entry an install writes (name, scope, file), the values it
//! asks for, the secrets it keeps, where it comes from, and what it replaces. Front ends
//! show it, collect values ([`InstallPlan::fill`] gives the entry with them in, and its
//! digest), and commit it ([`super::Installer::commit`]) naming the digest they showed: an
//! entry is only written exactly as shown.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Digest;

use super::build::PlanVariable;
use super::bundle::BundleInfo;
use super::choose::PackageKind;
use super::template::{Template, Values};
use super::InstallError;
use crate::config::Scope;

/// The values a user gives, by variable name (secret ones included: they are kept in the
/// credential store, never in the entry).
pub type Answers = BTreeMap<String, String>;

/// Longest value accepted for a variable.
pub const MAX_VALUE: usize = 16 * 1024;

/// Where an install comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PlanSource {
    /// The registry's base URL.
    pub registry: String,
    /// The server's name there.
    pub name: String,
    pub version: String,
    pub title: Option<String>,
    pub description: String,
    pub repository: Option<String>,
    pub website: Option<String>,
    /// The package used (`None`: a remote).
    pub package: Option<PackageKind>,
}

/// The entry an install replaces (an update).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Replaced {
    pub entry: Value,
    /// Its command line or URL, as written.
    pub target: String,
    /// The version it was installed at, when harness9 installed it.
    pub version: Option<String>,
}

/// A secret value, never shown in `Debug` output.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SecretValues(pub(super) BTreeMap<String, String>);

impl std::fmt::Debug for SecretValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

/// What an install writes and keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InstallPlan {
    pub source: PlanSource,
    /// The entry's name in harness9.
    pub name: String,
    pub scope: Scope,
    /// The file it is written to.
    pub path: String,
    /// The entry exactly as it will be written (with the values filled in so far).
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub entry: Value,
    /// Its command line or URL, as written.
    pub target: String,
    /// The values to ask for.
    pub variables: Vec<PlanVariable>,
    /// Plain values filled in (they are in `entry`).
    pub values: BTreeMap<String, String>,
    /// Secret variables that already have a value in the credential store (for this
    /// entry): asking again is optional.
    pub kept_secrets: Vec<String>,
    /// The entry it replaces (an update of an installed server).
    pub replaces: Option<Replaced>,
    /// What the user should look at before saying yes.
    pub warnings: Vec<String>,
    /// Other things to know (a registry answered from the cache, precedence).
    pub notes: Vec<String>,
    /// A digest of what is written (file, name, entry): a commit names the one shown.
    pub digest: String,
    /// How `entry` is made from the values.
    pub template: Template,
    /// What a bundle is, declares and needs (`None`: from a registry).
    #[serde(default)]
    pub bundle: Option<BundleInfo>,
    /// Secret values given (kept in the credential store at commit).
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub(super) secrets: SecretValues,
}

/// What a bundle declares and needs, in lines for a terminal.
fn bundle_text(b: &BundleInfo) -> String {
    use crate::term_text::Line;
    let list = |items: &[super::bundle::DeclaredItem], more: bool| {
        let mut names: Vec<String> = items
            .iter()
            .take(20)
            .map(|d| Line(&d.name).to_string())
            .collect();
        if items.len() > 20 {
            names.push(format!("and {} more", items.len() - 20));
        }
        if more {
            names.push("more made at run time".into());
        }
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    let mut out = format!(
        "  Tools: {}\n  Prompts: {}\n",
        list(&b.tools, b.tools_generated),
        list(&b.prompts, b.prompts_generated)
    );
    let c = &b.compatibility;
    let mut runs = vec![if c.platforms.is_empty() {
        format!("any platform ({})", c.platform)
    } else {
        format!("{} ({} here)", c.platforms.join(", "), c.platform)
    }];
    for r in &c.runtimes {
        runs.push(format!(
            "{} {} (found {})",
            Line(&r.name),
            r.wanted
                .as_deref()
                .map_or("any version".to_string(), |w| Line(w).to_string()),
            r.found
                .as_deref()
                .map_or("no version".to_string(), |f| Line(f).to_string())
        ));
    }
    out.push_str(&format!("  Runs on: {}\n", runs.join("; ")));
    out.push_str(&format!(
        "  Files: {} ({} KB) into {}\n",
        b.files,
        b.unpacked_bytes.div_ceil(1024),
        Line(&b.dir)
    ));
    out
}

/// Checks a value against its variable's format: a number (within its bounds), a path
/// (absolute; one a line when it may have several), or text with no line break unless
/// it may have several values.
fn check_typed(v: &PlanVariable, value: &str) -> Result<(), String> {
    let several = v.multiple;
    if !several && value.contains(super::template::SEPARATOR) {
        return Err("it must be one line".into());
    }
    match v.format.as_deref() {
        Some("number") => {
            let n: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|n: &f64| n.is_finite())
                .ok_or("it must be a number")?;
            if v.min.is_some_and(|m| n < m) || v.max.is_some_and(|m| n > m) {
                let bound = |b: Option<f64>| b.map_or("any".to_string(), |b| b.to_string());
                return Err(format!(
                    "it must be between {} and {}",
                    bound(v.min),
                    bound(v.max)
                ));
            }
        }
        Some("directory" | "file") => {
            for p in value.split(super::template::SEPARATOR) {
                if !std::path::Path::new(p).is_absolute() {
                    return Err(format!(
                        "\"{}\" is not an absolute path",
                        crate::truncate::prefix(p, 200)
                    ));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The digest a commit names: of the file, the name and the entry.
pub fn digest(path: &str, name: &str, entry: &Value) -> String {
    let text = serde_json::json!([path, name, entry]).to_string();
    let hash = sha2::Sha256::digest(text.as_bytes());
    hash.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// A server name for a registry name: its last part, cleaned (`io.github.a/b-c` → `b-c`).
pub fn local_name(registry_name: &str) -> String {
    let last = registry_name.rsplit('/').next().unwrap_or(registry_name);
    let cleaned: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let cleaned = cleaned.trim_matches(['-', '.']).to_string();
    if cleaned.is_empty() {
        "server".into()
    } else {
        crate::truncate::prefix(&cleaned, 64).to_string()
    }
}

/// A command line or URL of an entry, as written (arguments quoted for a shell, so what is
/// shown is what runs).
pub fn target_of(name: &str, entry: &Value) -> String {
    crate::config::servers::check_entry(name, entry)
        .map(|c| c.target_as_written())
        .unwrap_or_else(|e| e.to_string())
}

impl InstallPlan {
    /// The plan with `answers` in: plain values in the entry, secret ones kept aside for
    /// the commit, defaults for what was not answered. Refuses unknown names, a required
    /// value with none, a value outside the choices, and values that cannot be passed
    /// (NUL, longer than [`MAX_VALUE`]).
    pub fn fill(&self, answers: &Answers) -> Result<InstallPlan, InstallError> {
        self.fill_with(answers, true)
    }

    /// [`InstallPlan::fill`] that leaves out what has no value instead of refusing (what
    /// a dry run shows; [`InstallPlan::missing`] lists what is still needed).
    pub fn fill_partly(&self, answers: &Answers) -> Result<InstallPlan, InstallError> {
        self.fill_with(answers, false)
    }

    fn fill_with(&self, answers: &Answers, require: bool) -> Result<InstallPlan, InstallError> {
        for k in answers.keys() {
            if !self.variables.iter().any(|v| &v.name == k) {
                return Err(InstallError::UnknownVariable {
                    name: k.clone(),
                    known: self.variables.iter().map(|v| v.name.clone()).collect(),
                });
            }
        }
        let mut plain: BTreeMap<String, String> = BTreeMap::new();
        let mut secrets: BTreeMap<String, String> = BTreeMap::new();
        let mut missing: Vec<String> = Vec::new();
        for v in &self.variables {
            let given = answers
                .get(&v.name)
                .filter(|a| !a.is_empty())
                .cloned()
                .or_else(|| self.secrets.0.get(&v.name).cloned())
                .or_else(|| {
                    (!v.secret)
                        .then(|| self.values.get(&v.name).cloned())
                        .flatten()
                })
                .or_else(|| v.default.clone().filter(|d| !d.is_empty()));
            let Some(value) = given else {
                if v.required && !(v.secret && self.kept_secrets.contains(&v.name)) {
                    missing.push(v.name.clone());
                }
                continue;
            };
            if value.contains('\0') || value.len() > MAX_VALUE {
                return Err(InstallError::BadValue {
                    name: v.name.clone(),
                    reason: format!("it must have no NUL character and at most {MAX_VALUE} bytes"),
                });
            }
            if !v.choices.is_empty() && !v.choices.contains(&value) {
                return Err(InstallError::BadValue {
                    name: v.name.clone(),
                    reason: format!("it must be one of: {}", v.choices.join(", ")),
                });
            }
            check_typed(v, &value).map_err(|reason| InstallError::BadValue {
                name: v.name.clone(),
                reason,
            })?;
            if v.secret {
                secrets.insert(v.name.clone(), value);
            } else {
                plain.insert(v.name.clone(), value);
            }
        }
        if require && !missing.is_empty() {
            return Err(InstallError::Missing { names: missing });
        }
        let mut out = self.clone();
        out.values = plain;
        out.secrets = SecretValues(secrets);
        out.render();
        Ok(out)
    }

    /// Names of the required values with no answer yet (and no default or kept secret).
    pub fn missing(&self) -> Vec<&PlanVariable> {
        self.variables
            .iter()
            .filter(|v| v.required)
            .filter(|v| v.default.as_deref().is_none_or(str::is_empty))
            .filter(|v| !self.values.contains_key(&v.name))
            .filter(|v| !self.secrets.0.contains_key(&v.name))
            .filter(|v| !(v.secret && self.kept_secrets.contains(&v.name)))
            .collect()
    }

    /// Recomputes `entry`, `target` and `digest` from the template and the values.
    pub(super) fn render(&mut self) {
        let mut values = Values::default();
        for (k, v) in &self.values {
            values.plain.insert(k.as_str(), v.as_str());
        }
        for v in &self.variables {
            if v.multiple {
                values.multiple.push(v.name.as_str());
            }
        }
        for v in &self.variables {
            if v.secret
                && (self.secrets.0.contains_key(&v.name) || self.kept_secrets.contains(&v.name))
            {
                values.secret.push(v.name.as_str());
            }
        }
        self.entry = self.template.render(&values);
        self.target = target_of(&self.name, &self.entry);
        self.digest = digest(&self.path, &self.name, &self.entry);
    }

    /// The secret variables that get a value at commit.
    pub fn secrets_given(&self) -> Vec<String> {
        self.secrets.0.keys().cloned().collect()
    }

    /// What the install does, in lines for a terminal (untrusted text made safe).
    pub fn to_text(&self) -> String {
        use crate::term_text::{Block, Line};
        let s = &self.source;
        let how = match s.package {
            Some(k) => format!("{} package", k.word()),
            None => "remote".into(),
        };
        let mut out = match &self.bundle {
            Some(b) => format!(
                "{} {} by {} (bundle {}, {})\n",
                Line(&s.name),
                Line(&s.version),
                Line(&b.author),
                Line(&s.registry),
                if b.signed {
                    "signed, signature not checked"
                } else {
                    "not signed"
                }
            ),
            None => format!(
                "{} {} from {} ({how})\n",
                Line(&s.name),
                Line(&s.version),
                Line(&s.registry)
            ),
        };
        if !s.description.is_empty() {
            out.push_str(&format!("  {}\n", Block(&s.description)));
        }
        if let Some(b) = &self.bundle {
            out.push_str(&bundle_text(b));
        }
        let verb = if self.replaces.is_some() {
            "Replaces"
        } else {
            "Adds"
        };
        out.push_str(&format!(
            "{verb} server \"{}\" in the {} scope ({}):\n",
            Line(&self.name),
            self.scope,
            Line(&self.path)
        ));
        if let Some(r) = &self.replaces {
            out.push_str(&format!("  - {}\n", Line(&r.target)));
            out.push_str(&format!("  + {}\n", Line(&self.target)));
        } else {
            out.push_str(&format!("  {}\n", Line(&self.target)));
        }
        for (label, key) in [("env", "env"), ("header", "headers")] {
            if let Some(Value::Object(m)) = self.entry.get(key) {
                for (k, v) in m {
                    let v = v.as_str().unwrap_or_default();
                    let kept = if crate::config::inputs::names_in(v).is_empty() {
                        ""
                    } else {
                        "  (secret: kept in the credential store)"
                    };
                    out.push_str(&format!("  {label} {}={}{kept}\n", Line(k), Line(v)));
                }
            }
        }
        if !self.variables.is_empty() {
            out.push_str("Values:\n");
            for v in &self.variables {
                let mut what: Vec<&str> = Vec::new();
                what.push(if v.required { "required" } else { "optional" });
                if v.secret {
                    what.push("secret");
                }
                let state = if v.secret && self.secrets.0.contains_key(&v.name) {
                    "given".to_string()
                } else if v.secret && self.kept_secrets.contains(&v.name) {
                    "kept".to_string()
                } else if let Some(x) = self.values.get(&v.name) {
                    format!("= {}", Line(x))
                } else if v.required {
                    "missing".to_string()
                } else {
                    "left out".to_string()
                };
                let about = v
                    .description
                    .as_deref()
                    .map(|d| format!(": {}", Line(crate::truncate::prefix(d, 120))))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "  {} ({}) {state}{about}\n",
                    Line(&v.name),
                    what.join(", ")
                ));
            }
        }
        for w in &self.warnings {
            out.push_str(&format!("Warning: {}\n", Line(w)));
        }
        for n in &self.notes {
            out.push_str(&format!("Note: {}\n", Line(n)));
        }
        out
    }
}
