//! From a bundle's manifest to the entry that runs it: its `mcp_config` (with the
//! platform's override applied, or the server type's default when it has none) with the
//! variables filled in — `${__dirname}` (the bundle's folder), `${HOME}`, `${DESKTOP}`,
//! `${DOCUMENTS}`, `${DOWNLOADS}`, `${/}` and `${pathSeparator}` at once, and
//! `${user_config.KEY}` as a variable the user gives (a `multiple` one used as a whole
//! argument gives one argument per value). Any other `${…}` is refused: harness9 would
//! read it as an environment variable of its own.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value};

use super::manifest::{Field, FieldType, Manifest, McpConfig};
use crate::install::build::{PlanVariable, VariableKind};
use crate::install::template::{ArgGroup, Seg, Template, Text, SEPARATOR};

/// A runtime the entry's command needs on the servers' PATH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needs {
    /// `node`, `python`, `uv`, or the program of a binary server.
    pub runtime: String,
    pub program: String,
}

/// The entry's template, the values it asks for, and what it needs.
#[derive(Debug, Clone)]
pub struct Built {
    pub template: Template,
    pub variables: Vec<PlanVariable>,
    pub needs: Option<Needs>,
    pub warnings: Vec<String>,
}

struct Ctx<'a> {
    dir: &'a str,
    fields: &'a [Field],
}

fn known(name: &str, ctx: &Ctx<'_>) -> Option<String> {
    let home = || dirs::home_dir().map(|h| h.display().to_string());
    let under = |d: Option<std::path::PathBuf>, leaf: &str| {
        d.map(|p| p.display().to_string())
            .or_else(|| home().map(|h| format!("{h}/{leaf}")))
    };
    match name {
        "__dirname" => Some(ctx.dir.to_string()),
        "HOME" => home(),
        "DESKTOP" => under(dirs::desktop_dir(), "Desktop"),
        "DOCUMENTS" => under(dirs::document_dir(), "Documents"),
        "DOWNLOADS" => under(dirs::download_dir(), "Downloads"),
        "/" | "pathSeparator" => Some(std::path::MAIN_SEPARATOR.to_string()),
        _ => None,
    }
}

/// `s` with its variables filled in; `${user_config.KEY}` kept as a variable when `vars`.
fn expand(s: &str, ctx: &Ctx<'_>, vars: bool) -> Result<Text, String> {
    let mut out: Text = Vec::new();
    let push = |t: &str, out: &mut Text| {
        if t.is_empty() {
            return;
        }
        match out.last_mut() {
            Some(Seg::Text(x)) => x.push_str(t),
            _ => out.push(Seg::Text(t.to_string())),
        }
    };
    let mut rest = s;
    while let Some((before, after)) = rest.split_once("${") {
        push(before, &mut out);
        let Some((body, tail)) = after.split_once('}') else {
            return Err(format!(
                "\"{}\" has a `${{` with no `}}`",
                crate::truncate::prefix(s, 200)
            ));
        };
        if let Some(key) = body.strip_prefix("user_config.") {
            if !ctx.fields.iter().any(|f| f.key == key) {
                return Err(format!(
                    "it uses ${{user_config.{}}}, which its user_config does not declare",
                    crate::truncate::prefix(key, 64)
                ));
            }
            if !vars {
                return Err(format!(
                    "\"{}\" uses a user_config value where none can be used",
                    crate::truncate::prefix(s, 200)
                ));
            }
            out.push(Seg::Var(key.to_string()));
        } else if let Some(v) = known(body, ctx) {
            push(&v, &mut out);
        } else {
            return Err(format!(
                "it uses ${{{}}}, which bundles do not define",
                crate::truncate::prefix(body, 64)
            ));
        }
        rest = tail;
    }
    push(rest, &mut out);
    Ok(out)
}

fn literal(t: &Text) -> Option<String> {
    match t.as_slice() {
        [] => Some(String::new()),
        [Seg::Text(s)] => Some(s.clone()),
        _ => None,
    }
}

/// The manifest's `mcp_config` with the override of `platform` applied (its `env` adds to
/// and replaces the base's; its `command` and `args` replace them).
fn config_for(m: &Manifest, platform: &str) -> Result<Option<McpConfig>, String> {
    let Some(base) = m.server.mcp_config.clone() else {
        return Ok(None);
    };
    let Some(o) = base.platform_overrides.get(platform) else {
        return Ok(Some(base));
    };
    let o: McpConfig = serde_json::from_value(o.clone())
        .map_err(|e| format!("its platform override \"{platform}\" is not valid ({e})"))?;
    let mut env: Map<String, Value> = base.env.clone().unwrap_or_default();
    env.extend(o.env.unwrap_or_default());
    Ok(Some(McpConfig {
        command: o.command.or(base.command),
        args: o.args.or(base.args),
        env: Some(env),
        platform_overrides: Map::new(),
    }))
}

/// The default command of a server type without an `mcp_config`.
fn default_config(kind: &str, entry: &str) -> McpConfig {
    let (command, args): (&str, Vec<String>) = match kind {
        "node" => ("node", vec![format!("${{__dirname}}/{entry}")]),
        "python" => ("python3", vec![format!("${{__dirname}}/{entry}")]),
        "uv" => (
            "uv",
            vec![
                "run".into(),
                "--directory".into(),
                "${__dirname}".into(),
                format!("${{__dirname}}/{entry}"),
            ],
        ),
        _ => ("", Vec::new()),
    };
    McpConfig {
        command: (!command.is_empty())
            .then(|| command.to_string())
            .or_else(|| Some(format!("${{__dirname}}/{entry}"))),
        args: Some(args),
        env: None,
        platform_overrides: Map::new(),
    }
}

/// Builds the entry's template for a bundle unpacked into `dir`, whose files are `files`.
pub fn build(
    m: &Manifest,
    fields: &[Field],
    dir: &Path,
    files: &BTreeSet<String>,
    platform: &str,
) -> Result<Built, String> {
    let dir_text = dir.display().to_string();
    let ctx = Ctx {
        dir: &dir_text,
        fields,
    };
    let entry = m
        .server
        .entry_point
        .strip_prefix("./")
        .unwrap_or(&m.server.entry_point);
    if !files.contains(entry) {
        return Err(format!(
            "its entry point \"{}\" is not in the bundle",
            crate::truncate::prefix(entry, 200)
        ));
    }
    let cfg = match config_for(m, platform)? {
        Some(c) if c.command.is_some() => c,
        Some(_) if m.server.kind != "uv" => {
            return Err("its mcp_config has no command".into());
        }
        _ => default_config(&m.server.kind, entry),
    };
    let mut warnings = Vec::new();
    // The command: the bundle's own file, or a runtime found on the servers' PATH.
    let raw = cfg.command.clone().unwrap_or_default();
    let Some(mut command) = literal(&expand(&raw, &ctx, false)?) else {
        return Err("its command uses a user_config value".into());
    };
    let prefix = format!("{dir_text}/");
    if !command.starts_with('/') && command.contains('/') {
        command = format!("{prefix}{}", command.trim_start_matches("./"));
    }
    let needs = if let Some(own) = command.strip_prefix(&prefix) {
        if !files.contains(own) {
            return Err(format!(
                "its command \"{}\" is not in the bundle",
                crate::truncate::prefix(own, 200)
            ));
        }
        None
    } else if command.starts_with('/') {
        warnings.push(format!("it runs {command}, a program outside the bundle"));
        None
    } else {
        let runtime = match m.server.kind.as_str() {
            "node" | "python" | "uv" => m.server.kind.clone(),
            _ => command.clone(),
        };
        Some(Needs {
            runtime,
            program: command.clone(),
        })
    };
    // Arguments: a flag and the value after it stay together (left out together when an
    // optional value is not given).
    let texts = cfg
        .args
        .clone()
        .unwrap_or_default()
        .iter()
        .map(|a| expand(a, &ctx, true))
        .collect::<Result<Vec<Text>, String>>()?;
    let is_multiple = |t: &Text| match t.as_slice() {
        [Seg::Var(k)] => fields.iter().any(|f| &f.key == k && f.multiple),
        _ => false,
    };
    let mut args: Vec<ArgGroup> = Vec::new();
    let mut i = 0;
    while let Some(t) = texts.get(i) {
        let next = texts.get(i + 1);
        let flag = literal(t).is_some_and(|s| s.starts_with('-'));
        let value_next = next.is_some_and(|n| {
            !is_multiple(n)
                && n.iter().any(|s| matches!(s, Seg::Var(_)))
                && !matches!(n.first(), Some(Seg::Text(x)) if x.starts_with('-'))
        });
        if is_multiple(t) {
            args.push(ArgGroup {
                parts: vec![t.clone()],
                spread: true,
            });
            i += 1;
        } else if let (true, true, Some(n)) = (flag, value_next, next) {
            args.push(ArgGroup {
                parts: vec![t.clone(), n.clone()],
                spread: false,
            });
            i += 2;
        } else {
            args.push(ArgGroup {
                parts: vec![t.clone()],
                spread: false,
            });
            i += 1;
        }
    }
    let mut env: Vec<(String, Text)> = Vec::new();
    for (k, v) in cfg.env.clone().unwrap_or_default() {
        let v = v.as_str().unwrap_or_default();
        env.push((k, expand(v, &ctx, true)?));
    }
    let template = Template::Stdio {
        command,
        args,
        env,
        cwd: Some(dir_text.clone()),
    };
    let in_env: BTreeSet<String> = match &template {
        Template::Stdio { env, .. } => env
            .iter()
            .flat_map(|(_, t)| crate::install::template::vars_of(t))
            .map(str::to_string)
            .collect(),
        Template::Http { .. } | Template::Sse { .. } => BTreeSet::new(),
    };
    let mut variables = Vec::new();
    for f in fields {
        let default = match &f.default {
            None => None,
            Some(list) => {
                let mut out = Vec::new();
                for d in list {
                    let t = expand(d, &ctx, false)
                        .map_err(|e| format!("the default of \"{}\": {e}", f.key))?;
                    out.extend(literal(&t));
                }
                Some(out.join(&SEPARATOR.to_string()))
            }
        };
        let description = match (&f.title, &f.description) {
            (Some(t), Some(d)) => Some(format!("{t}: {d}")),
            (Some(x), None) | (None, Some(x)) => Some(x.clone()),
            (None, None) => None,
        };
        variables.push(PlanVariable {
            name: f.key.clone(),
            kind: if in_env.contains(&f.key) {
                VariableKind::Env
            } else {
                VariableKind::Argument
            },
            description,
            required: f.required,
            secret: f.sensitive,
            default,
            choices: if f.kind == FieldType::Boolean {
                vec!["true".into(), "false".into()]
            } else {
                Vec::new()
            },
            format: Some(f.kind.word().to_string()),
            placeholder: None,
            min: f.min,
            max: f.max,
            multiple: f.multiple,
        });
    }
    Ok(Built {
        template,
        variables,
        needs,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::template::Values;
    use serde_json::json;

    fn manifest(v: Value) -> (Manifest, Vec<Field>) {
        let m = super::super::manifest::parse(v.to_string().as_bytes()).unwrap();
        let f = m.fields().unwrap();
        (m, f)
    }

    #[test]
    fn variables_are_filled_in_and_values_asked_for() {
        let (m, f) = manifest(json!({
            "name": "fs", "version": "1.0.0", "author": {"name": "A"},
            "server": {"type": "node", "entry_point": "server/index.js",
                "mcp_config": {"command": "node",
                    "args": ["${__dirname}${/}server/index.js", "${user_config.dirs}",
                             "--timeout", "${user_config.timeout}"],
                    "env": {"API_KEY": "${user_config.key}", "CFG": "${__dirname}/c.json"},
                    "platform_overrides": {"linux": {"env": {"EXTRA": "1"}},
                                           "win32": {"command": "node.exe"}}}},
            "user_config": {
                "dirs": {"type": "directory", "multiple": true, "required": true, "default": ["${HOME}/x"]},
                "timeout": {"type": "number", "min": 1},
                "key": {"type": "string", "sensitive": true, "required": true}
            }
        }));
        let files: BTreeSet<String> = ["server/index.js".to_string()].into();
        let b = build(&m, &f, Path::new("/data/b/fs@1.0.0"), &files, "linux").unwrap();
        assert_eq!(
            b.needs,
            Some(Needs {
                runtime: "node".into(),
                program: "node".into()
            })
        );
        let home = dirs::home_dir().unwrap().display().to_string();
        assert_eq!(b.variables[0].default, Some(format!("{home}/x")));
        assert_eq!(b.variables[0].kind, VariableKind::Argument);
        assert_eq!(b.variables[2].kind, VariableKind::Env);
        let mut v = Values::default();
        v.plain.insert("dirs", "/a\n/b");
        v.multiple.push("dirs");
        v.secret.push("key");
        assert_eq!(
            b.template.render(&v),
            json!({"type": "stdio", "command": "node",
                   "args": ["/data/b/fs@1.0.0/server/index.js", "/a", "/b"],
                   "env": {"API_KEY": "${input:key}", "CFG": "/data/b/fs@1.0.0/c.json", "EXTRA": "1"},
                   "cwd": "/data/b/fs@1.0.0"})
        );
        v.plain.insert("timeout", "5");
        assert_eq!(
            b.template.render(&v)["args"],
            json!([
                "/data/b/fs@1.0.0/server/index.js",
                "/a",
                "/b",
                "--timeout",
                "5"
            ])
        );
    }

    #[test]
    fn lies_and_unknown_variables_are_refused() {
        let base = json!({"name": "x", "version": "1.0.0", "author": {"name": "A"},
            "server": {"type": "binary", "entry_point": "bin/x",
                       "mcp_config": {"command": "bin/x", "args": []}}});
        let files: BTreeSet<String> = ["bin/x".to_string()].into();
        let dir = Path::new("/d");
        let (m, f) = manifest(base.clone());
        let b = build(&m, &f, dir, &files, "linux").unwrap();
        assert_eq!(b.needs, None);
        assert!(matches!(&b.template, Template::Stdio { command, .. } if command == "/d/bin/x"));
        let err = |patch: &dyn Fn(&mut Value)| {
            let mut v = base.clone();
            patch(&mut v);
            let (m, f) = manifest(v);
            build(&m, &f, dir, &files, "linux").unwrap_err()
        };
        assert_eq!(
            err(&|v| v["server"]["entry_point"] = json!("bin/missing")),
            "its entry point \"bin/missing\" is not in the bundle"
        );
        assert_eq!(
            err(&|v| v["server"]["mcp_config"]["command"] = json!("bin/other")),
            "its command \"bin/other\" is not in the bundle"
        );
        assert_eq!(
            err(&|v| v["server"]["mcp_config"]["args"] = json!(["${PATH}"])),
            "it uses ${PATH}, which bundles do not define"
        );
        assert_eq!(
            err(&|v| v["server"]["mcp_config"]["args"] = json!(["${user_config.nope}"])),
            "it uses ${user_config.nope}, which its user_config does not declare"
        );
    }
}
