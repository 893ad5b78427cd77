//! `harness9 mcp resources|read|prompts|prompt`: the server features beyond tools, from the
//! command line. Same rules as `mcp call`: 0 success, 1 the server failed or answered
//! with an error, 2 bad arguments, an unknown server or prompt, or an unreadable
//! `.mcp.json`.

use harness9::term_text;
use std::path::PathBuf;

use clap::Subcommand;
use harness9::host::catalog::FeatureError;
use harness9::manager::ServerState;
use harness9::mcp::features::ResourceContents;
use harness9::Harness;
use serde_json::{json, Map, Value};

use super::{open, EXIT_FAILED, EXIT_USAGE};
use crate::ProjectArgs;

#[derive(Subcommand)]
pub enum SurfaceCommand {
    /// List the resources and resource templates of every server (or of one).
    Resources {
        /// Only this server.
        server: Option<String>,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Read one resource and print it (text as it is, binary described).
    Read {
        server: String,
        uri: String,
        /// Write the contents (binary decoded) to this file instead.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// List the prompts of every server (or of one); `*` marks required arguments.
    Prompts {
        /// Only this server.
        server: Option<String>,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Get one prompt with its arguments and print its messages.
    Prompt {
        server: String,
        name: String,
        /// Arguments as a JSON object of strings, e.g. '{"city": "Paris"}'.
        args: Option<String>,
        #[command(flatten)]
        project: ProjectArgs,
    },
}

pub async fn run(command: SurfaceCommand) -> i32 {
    match command {
        SurfaceCommand::Resources { server, project } => resources(project, server).await,
        SurfaceCommand::Read {
            server,
            uri,
            output,
            project,
        } => read(project, server, uri, output).await,
        SurfaceCommand::Prompts { server, project } => prompts(project, server).await,
        SurfaceCommand::Prompt {
            server,
            name,
            args,
            project,
        } => prompt(project, server, name, args).await,
    }
}

/// Checks the server name before starting anything, then opens the project with only
/// that server (or all of them).
async fn open_for(args: &ProjectArgs, server: Option<&String>) -> Result<Harness, i32> {
    if let Some(server) = server {
        let cfg = harness9::config::McpConfig::load_scoped(&args.project);
        if cfg.error.is_none() && !cfg.servers.contains_key(server) {
            let known: Vec<&String> = cfg.servers.keys().collect();
            errln!(
                "harness9: no server named \"{server}\" in any config scope (servers: {known:?})"
            );
            return Err(EXIT_USAGE);
        }
    }
    let only = server.map(|s| vec![s.clone()]);
    open(args, only.as_deref()).await
}

/// Says on stderr which servers could not be asked.
fn report_unavailable(harness: &Harness) {
    for s in &harness.manager().snapshot().servers {
        match &s.state {
            ServerState::Failed { reason, .. } => {
                errln!(
                    "harness9: server \"{}\" failed: {reason}",
                    harness9::term_text::Line(&s.name)
                )
            }
            ServerState::AwaitingApproval => errln!(
                "harness9: server \"{}\" is awaiting approval; run with --yes to start it",
                harness9::term_text::Line(&s.name)
            ),
            ServerState::Starting { .. }
            | ServerState::Connected { .. }
            | ServerState::Disabled
            | ServerState::NeedsAuth { .. }
            | ServerState::Stopped => {}
        }
    }
}

fn exit_code(e: &FeatureError) -> i32 {
    match e {
        FeatureError::UnknownServer { .. } => EXIT_USAGE,
        FeatureError::NotConnected { .. }
        | FeatureError::Unsupported { .. }
        | FeatureError::Client { .. } => EXIT_FAILED,
    }
}

async fn finish(harness: Harness, code: i32) -> i32 {
    harness.shutdown().await;
    code
}

/// Reports a failed request (with `--json`, also its error object) and gives the exit code.
fn fail(json: bool, e: FeatureError) -> i32 {
    crate::cli::out::failure(json, e.code(), &e.to_string());
    exit_code(&e)
}

fn print_json(v: &impl serde::Serialize) {
    crate::cli::out::json(v);
}

async fn resources(args: ProjectArgs, server: Option<String>) -> i32 {
    let harness = match open_for(&args, server.as_ref()).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    report_unavailable(&harness);
    let listed = async {
        let r = harness.resources(server.as_deref()).await?;
        let t = harness.resource_templates(server.as_deref()).await?;
        Ok::<_, FeatureError>((r, t))
    };
    let (resources, templates) = match listed.await {
        Ok(both) => both,
        Err(e) => return finish(harness, fail(args.json, e)).await,
    };
    if args.json {
        print_json(&json!({"resources": resources, "resourceTemplates": templates}));
    } else if resources.is_empty() && templates.is_empty() {
        outln!("No resources.");
    } else {
        let rows: Vec<[&str; 4]> = resources
            .iter()
            .map(|r| {
                let r2 = &r.resource;
                let name = r2.title.as_deref().unwrap_or(&r2.name);
                [
                    &r.server,
                    &r2.uri,
                    name,
                    r2.mime_type.as_deref().unwrap_or(""),
                ]
            })
            .collect();
        if !rows.is_empty() {
            table(["SERVER", "URI", "NAME", "MIME"], &rows);
        }
        let rows: Vec<[&str; 4]> = templates
            .iter()
            .map(|t| {
                let t2 = &t.template;
                let name = t2.title.as_deref().unwrap_or(&t2.name);
                [
                    &t.server,
                    &t2.uri_template,
                    name,
                    t2.mime_type.as_deref().unwrap_or(""),
                ]
            })
            .collect();
        if !rows.is_empty() {
            if !resources.is_empty() {
                outln!();
            }
            table(["SERVER", "URI TEMPLATE", "NAME", "MIME"], &rows);
        }
    }
    finish(harness, 0).await
}

async fn read(args: ProjectArgs, server: String, uri: String, output: Option<PathBuf>) -> i32 {
    let harness = match open_for(&args, Some(&server)).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    let result = match harness.read_resource(&server, &uri).await {
        Ok(r) => r,
        Err(e) => return finish(harness, fail(args.json, e)).await,
    };
    let code = if args.json {
        print_json(&result);
        0
    } else if let Some(path) = output {
        let mut bytes = Vec::new();
        for c in &result.contents {
            match (&c.text, &c.blob) {
                (Some(t), _) => bytes.extend_from_slice(t.as_bytes()),
                (None, Some(b)) => match decode_base64(b) {
                    Some(d) => bytes.extend(d),
                    None => {
                        errln!("harness9: the server sent {} with invalid base64", c.uri);
                        return finish(harness, EXIT_FAILED).await;
                    }
                },
                (None, None) => {}
            }
        }
        match std::fs::write(&path, &bytes) {
            Ok(()) => {
                errln!(
                    "harness9: wrote {} bytes to {}",
                    bytes.len(),
                    path.display()
                );
                0
            }
            Err(e) => {
                errln!("harness9: cannot write {}: {e}", path.display());
                EXIT_FAILED
            }
        }
    } else {
        for c in &result.contents {
            outln!("{}", describe(c));
        }
        0
    };
    finish(harness, code).await
}

/// Text as it is; binary as a line saying what it is and how to save it.
fn describe(c: &ResourceContents) -> String {
    match (&c.text, c.blob_len()) {
        (Some(t), _) => t.trim_end_matches('\n').to_string(),
        (None, Some(n)) => format!(
            "[binary {}: {}, {n} bytes; save it with --output FILE]",
            c.uri,
            c.mime_type.as_deref().unwrap_or("application/octet-stream")
        ),
        (None, None) => format!("[empty: {}]", c.uri),
    }
}

async fn prompts(args: ProjectArgs, server: Option<String>) -> i32 {
    let harness = match open_for(&args, server.as_ref()).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    report_unavailable(&harness);
    let prompts = match harness.prompts(server.as_deref()).await {
        Ok(p) => p,
        Err(e) => return finish(harness, fail(args.json, e)).await,
    };
    if args.json {
        print_json(&prompts);
    } else if prompts.is_empty() {
        outln!("No prompts.");
    } else {
        let arg_lists: Vec<String> = prompts
            .iter()
            .map(|p| {
                let names: Vec<String> = p
                    .prompt
                    .arguments
                    .iter()
                    .map(|a| format!("{}{}", a.name, if a.required { "*" } else { "" }))
                    .collect();
                names.join(", ")
            })
            .collect();
        let rows: Vec<[&str; 4]> = prompts
            .iter()
            .zip(&arg_lists)
            .map(|(p, a)| {
                let desc = p.prompt.description.as_deref().unwrap_or("");
                [
                    &p.server,
                    &p.prompt.name,
                    a,
                    desc.lines().next().unwrap_or(""),
                ]
            })
            .collect();
        table(["SERVER", "NAME", "ARGUMENTS", "DESCRIPTION"], &rows);
    }
    finish(harness, 0).await
}

async fn prompt(args: ProjectArgs, server: String, name: String, arguments: Option<String>) -> i32 {
    let arguments = match arguments.as_deref().map(serde_json::from_str::<Value>) {
        None => Map::new(),
        Some(Ok(Value::Object(m))) => m
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => (k, Value::String(s)),
                other => (k, Value::String(other.to_string())),
            })
            .collect(),
        Some(Ok(_)) | Some(Err(_)) => {
            errln!("harness9: ARGS_JSON must be a JSON object, e.g. '{{\"city\": \"Paris\"}}'");
            return EXIT_USAGE;
        }
    };
    let harness = match open_for(&args, Some(&server)).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    let known = match harness.prompts(Some(&server)).await {
        Ok(p) => p,
        Err(e) => return finish(harness, fail(args.json, e)).await,
    };
    let Some(found) = known.iter().find(|p| p.prompt.name == name) else {
        let names: Vec<&str> = known.iter().map(|p| p.prompt.name.as_str()).collect();
        errln!(
            "harness9: server \"{server}\" has no prompt \"{name}\" (it has: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
        return finish(harness, EXIT_USAGE).await;
    };
    let missing: Vec<&str> = found
        .prompt
        .arguments
        .iter()
        .filter(|a| a.required && !arguments.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        errln!(
            "harness9: prompt \"{name}\" needs the argument(s) {}; pass them as ARGS_JSON, e.g. '{{\"{}\": \"...\"}}'",
            missing.join(", "),
            missing[0]
        );
        return finish(harness, EXIT_USAGE).await;
    }
    let result = match harness.get_prompt(&server, &name, arguments).await {
        Ok(r) => r,
        Err(e) => return finish(harness, fail(args.json, e)).await,
    };
    if args.json {
        print_json(&result);
    } else {
        outln!("{}", result.to_text());
    }
    finish(harness, 0).await
}

/// Columns padded to their widest cell; the last one is not padded. Every cell is a
/// one-line field from a server, rendered with [`term_text::line`].
fn table<const N: usize>(header: [&str; N], rows: &[[&str; N]]) {
    let rows: Vec<[std::borrow::Cow<'_, str>; N]> =
        rows.iter().map(|row| row.map(term_text::line)).collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; N]| {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            s.push_str(cell);
            if i + 1 < N {
                let pad = widths[i] - cell.chars().count() + 2;
                s.extend(std::iter::repeat_n(' ', pad));
            }
        }
        s.trim_end().to_string()
    };
    outln!("{}", line(header));
    for row in &rows {
        outln!("{}", line(row.each_ref().map(|c| c.as_ref())));
    }
}

/// Standard base64 (padding optional, whitespace ignored); `None` when invalid.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for b in text.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            b if b.is_ascii_whitespace() => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_decodes() {
        assert_eq!(super::decode_base64("aGk=").unwrap(), b"hi");
        assert_eq!(super::decode_base64("aGVsbG8").unwrap(), b"hello");
        assert_eq!(super::decode_base64("AAEC").unwrap(), [0, 1, 2]);
        assert!(super::decode_base64("a*b").is_none());
    }
}
