//! `/model` and `/permissions`: the model provider settings and the project's tool
//! permission rules, each a façade call run beside the event loop (a connection test takes
//! up to [`harness9::engine::provider::setup::CONNECTION_TEST_TIMEOUT`]); the outcome comes
//! back as text for the transcript.
//!
//! A key for the keychain is typed hidden: after `/model key keychain` the input line shows
//! one `•` per character and Enter hands the key to the core (Esc gives up). The key is never
//! shown, never in the transcript, and never in an [`Action`]'s debug output.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use harness9::engine::permissions::{PermissionRule, ToolPermission};
use harness9::engine::provider::settings::{ApiKey, ProviderKind};
use harness9::engine::provider::setup::{KeySource, ProviderChange, ProviderView};
use harness9::Harness;

use super::model::{Action, SettingsCmd, UsageError};

/// What the input line shows while a key is typed.
pub const HIDDEN_PROMPT: &str = "API key (hidden, Enter keeps it, Esc cancels): ";

const MODEL_USAGE: &str = "usage: /model (show) · /model provider anthropic|openai · /model model NAME|default · /model url URL|default · /model key env VAR · /model key keychain · /model key forget · /model test";
const PERMISSIONS_USAGE: &str =
    "usage: /permissions (list) · /permissions allow|ask|deny TOOL-OR-PATTERN · /permissions revoke TOOL-OR-PATTERN";

/// The key being typed, hidden (its `Debug` shows no character of it).
#[derive(Default, Clone, PartialEq)]
pub struct HiddenKey(String);

impl std::fmt::Debug for HiddenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HiddenKey({} characters)", self.0.chars().count())
    }
}

/// What a `/model` or `/permissions` line asks for; `Err` says how to use it; `None` when
/// the line is another command. `Ok(None)`: start typing a key for the keychain.
pub fn parse(text: &str) -> Option<Result<Option<SettingsCmd>, UsageError>> {
    let (command, rest) = text.split_once(' ').unwrap_or((text, ""));
    let words: Vec<&str> = rest.split_whitespace().collect();
    let default_or = |w: &str| {
        if w == "default" {
            String::new()
        } else {
            w.to_string()
        }
    };
    match command {
        "/model" => Some(match words.as_slice() {
            [] => Ok(Some(SettingsCmd::ShowModel)),
            ["provider", p] => ProviderKind::parse(p)
                .map(|k| Some(SettingsCmd::Provider(k)))
                .ok_or_else(|| UsageError::UnknownProvider(p.to_string())),
            ["model", m] => Ok(Some(SettingsCmd::Model(default_or(m)))),
            ["url", u] => Ok(Some(SettingsCmd::Url(default_or(u)))),
            ["key", "env", v] => Ok(Some(SettingsCmd::KeyEnv(
                v.trim_start_matches('$').to_string(),
            ))),
            ["key", "keychain"] => Ok(None),
            ["key", "forget"] => Ok(Some(SettingsCmd::ForgetKey)),
            ["test"] => Ok(Some(SettingsCmd::Test)),
            _ => Err(UsageError::Usage(MODEL_USAGE)),
        }),
        "/permissions" => Some(match words.as_slice() {
            [] | ["list"] => Ok(Some(SettingsCmd::ListRules)),
            ["revoke", t] => Ok(Some(SettingsCmd::SetRule(t.to_string(), None))),
            [p, t] => ToolPermission::parse(p)
                .map(|p| Some(SettingsCmd::SetRule(t.to_string(), Some(p))))
                .ok_or(UsageError::Usage(PERMISSIONS_USAGE)),
            _ => Err(UsageError::Usage(PERMISSIONS_USAGE)),
        }),
        _ => None,
    }
}

/// Starts typing a key for the keychain: `typed` holds it, `input` (the input line) shows
/// the prompt.
pub fn start_hidden(typed: &mut Option<HiddenKey>, input: &mut String) {
    *typed = Some(HiddenKey::default());
    *input = HIDDEN_PROMPT.to_string();
}

/// Keys while a key is typed hidden (`typed` is `Some`): `Some` when consumed (with the
/// action to take). `input` shows one `•` per character.
pub fn hidden_key(
    typed: &mut Option<HiddenKey>,
    input: &mut String,
    key: KeyEvent,
) -> Option<Option<Action>> {
    let key_so_far = typed.as_mut()?;
    let done = match key.code {
        KeyCode::Esc => Some(None),
        KeyCode::Enter if key_so_far.0.trim().is_empty() => Some(None),
        KeyCode::Enter => Some(Some(Action::Settings(SettingsCmd::KeychainKey(
            ApiKey::new(key_so_far.0.trim()),
        )))),
        KeyCode::Backspace => {
            key_so_far.0.pop();
            None
        }
        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
            key_so_far.0.push(c);
            None
        }
        _ => None,
    };
    match done {
        Some(action) => {
            *typed = None;
            input.clear();
            Some(action)
        }
        None => {
            let n = typed.as_ref().map_or(0, |k| k.0.chars().count());
            *input = format!("{HIDDEN_PROMPT}{}", "•".repeat(n));
            Some(None)
        }
    }
}

/// The settings in words, for the transcript.
pub fn view_text(v: &ProviderView) -> String {
    let or_default = |s: &str, d: &str| {
        if s.is_empty() {
            format!("{d} (default)")
        } else {
            s.to_string()
        }
    };
    let source = match &v.key_source {
        KeySource::Env { var } => format!("${var}"),
        KeySource::Keychain => "keychain".to_string(),
    };
    let mut out = format!(
        "model provider: {}\n  model: {}\n  base URL: {}\n  key: {} (source: {source}; typed keys are kept in {})\n  settings file: {}",
        v.provider.name(),
        or_default(&v.model, &v.default_model),
        or_default(&v.base_url, &v.default_base_url),
        v.key_text,
        v.key_store,
        v.settings_path
    );
    if !v.overridden_by.is_empty() {
        out.push_str(&format!(
            "\n  set in the environment, and winning over these: {}",
            v.overridden_by.join(", ")
        ));
    }
    if let Some(e) = &v.error {
        out.push_str(&format!("\n  the settings file cannot be read: {e}"));
    }
    out
}

fn rules_text(rules: &[PermissionRule]) -> String {
    if rules.is_empty() {
        return "no tool permission rules for this project (an \"always\" answer adds one; /permissions allow|ask|deny TOOL adds one)".into();
    }
    let mut out = String::from("tool permission rules of this project:");
    for r in rules {
        out.push_str(&format!("\n  {:<5} {}", r.permission.name(), r.tool));
    }
    out.push_str(
        "\n/permissions allow|ask|deny TOOL changes one, /permissions revoke TOOL removes one",
    );
    out
}

/// The change a command makes to the settings as they are.
fn change_of(v: &ProviderView, cmd: &SettingsCmd) -> ProviderChange {
    let mut c = ProviderChange {
        provider: v.provider,
        model: v.model.clone(),
        base_url: v.base_url.clone(),
        key_source: v.key_source.clone(),
        api_key: None,
    };
    match cmd {
        SettingsCmd::Provider(k) if *k != v.provider => {
            // Another provider's model and URL mean nothing here; its key is elsewhere.
            c.provider = *k;
            c.model.clear();
            c.base_url.clear();
            if let KeySource::Env { .. } = c.key_source {
                c.key_source = KeySource::Env {
                    var: match k {
                        ProviderKind::Anthropic => "ANTHROPIC_API_KEY".into(),
                        ProviderKind::OpenAi => "OPENAI_API_KEY".into(),
                    },
                };
            }
        }
        SettingsCmd::Model(m) => c.model = m.clone(),
        SettingsCmd::Url(u) => c.base_url = u.clone(),
        SettingsCmd::KeyEnv(var) => c.key_source = KeySource::Env { var: var.clone() },
        SettingsCmd::KeychainKey(k) => {
            c.key_source = KeySource::Keychain;
            c.api_key = Some(k.clone());
        }
        SettingsCmd::Provider(_)
        | SettingsCmd::ShowModel
        | SettingsCmd::ForgetKey
        | SettingsCmd::Test
        | SettingsCmd::ListRules
        | SettingsCmd::SetRule(..) => {}
    }
    c
}

/// Runs one command; the text says what happened.
pub async fn run(harness: &Harness, cmd: SettingsCmd) -> String {
    const NEXT: &str = "\n(applies from the next message on)";
    match cmd {
        SettingsCmd::ShowModel => view_text(&harness.provider_settings().await),
        SettingsCmd::Test => {
            let check = harness.test_provider(None).await;
            format!(
                "{} {} ({} ms)",
                if check.ok { "✓" } else { "✗" },
                check.message,
                check.elapsed_ms
            )
        }
        SettingsCmd::ForgetKey => {
            let v = harness.provider_settings().await;
            match harness.forget_provider_key(v.provider).await {
                Ok(v) => format!("the kept key was forgotten\n{}", view_text(&v)),
                Err(e) => e.to_string(),
            }
        }
        SettingsCmd::ListRules => rules_text(&harness.permission_rules().await),
        SettingsCmd::SetRule(tool, permission) => {
            match harness.set_permission(&tool, permission).await {
                Ok(rules) => format!("{}{NEXT}", rules_text(&rules)),
                Err(e) => e.to_string(),
            }
        }
        cmd @ (SettingsCmd::Provider(_)
        | SettingsCmd::Model(_)
        | SettingsCmd::Url(_)
        | SettingsCmd::KeyEnv(_)
        | SettingsCmd::KeychainKey(_)) => {
            let v = harness.provider_settings().await;
            match harness.save_provider_settings(change_of(&v, &cmd)).await {
                Ok(v) => format!("saved\n{}{NEXT}", view_text(&v)),
                Err(e) => e.to_string(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEventKind;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent {
            code,
            modifiers: KeyModifiers::NONE,
            kind: KeyEventKind::Press,
            state: crossterm::event::KeyEventState::NONE,
        }
    }

    #[test]
    fn commands_parse() {
        assert_eq!(parse("/model"), Some(Ok(Some(SettingsCmd::ShowModel))));
        assert_eq!(
            parse("/model provider openai-compatible"),
            Some(Ok(Some(SettingsCmd::Provider(ProviderKind::OpenAi))))
        );
        assert_eq!(
            parse("/model model default"),
            Some(Ok(Some(SettingsCmd::Model(String::new()))))
        );
        assert_eq!(
            parse("/model key env $MY_KEY"),
            Some(Ok(Some(SettingsCmd::KeyEnv("MY_KEY".into()))))
        );
        assert_eq!(parse("/model key keychain"), Some(Ok(None)));
        assert!(matches!(parse("/model provider gemini"), Some(Err(_))));
        assert!(matches!(parse("/model nonsense"), Some(Err(_))));
        assert_eq!(
            parse("/permissions deny mcp__fs__*"),
            Some(Ok(Some(SettingsCmd::SetRule(
                "mcp__fs__*".into(),
                Some(ToolPermission::Deny)
            ))))
        );
        assert_eq!(
            parse("/permissions revoke x"),
            Some(Ok(Some(SettingsCmd::SetRule("x".into(), None))))
        );
        assert_eq!(
            parse("/permissions"),
            Some(Ok(Some(SettingsCmd::ListRules)))
        );
        assert_eq!(parse("/models"), None);
    }

    #[test]
    fn a_key_is_typed_hidden_and_never_shown() {
        let (mut typed, mut input) = (None, String::new());
        start_hidden(&mut typed, &mut input);
        for c in "sk-secret".chars() {
            assert_eq!(
                hidden_key(&mut typed, &mut input, key(KeyCode::Char(c))),
                Some(None)
            );
        }
        hidden_key(&mut typed, &mut input, key(KeyCode::Backspace));
        assert_eq!(input, format!("{HIDDEN_PROMPT}{}", "•".repeat(8)));
        assert!(!format!("{typed:?}").contains("secre"));
        let done = hidden_key(&mut typed, &mut input, key(KeyCode::Enter))
            .unwrap()
            .unwrap();
        assert!(!format!("{done:?}").contains("sk-secre"), "{done:?}");
        let Action::Settings(SettingsCmd::KeychainKey(k)) = done else {
            panic!("{done:?}")
        };
        assert_eq!(k.expose(), "sk-secre");
        assert_eq!((input.as_str(), typed.is_none()), ("", true));
        // Esc gives up; nothing is kept.
        start_hidden(&mut typed, &mut input);
        hidden_key(&mut typed, &mut input, key(KeyCode::Char('x')));
        assert_eq!(
            hidden_key(&mut typed, &mut input, key(KeyCode::Esc)),
            Some(None)
        );
        assert_eq!(input, "");
        // Not typing a key: other keys are not taken.
        assert_eq!(
            hidden_key(&mut typed, &mut input, key(KeyCode::Char('y'))),
            None
        );
    }

    #[test]
    fn switching_provider_resets_model_url_and_the_key_variable() {
        let v = ProviderView {
            provider: ProviderKind::Anthropic,
            model: "claude-x".into(),
            base_url: "http://a".into(),
            default_model: String::new(),
            default_base_url: String::new(),
            key_source: KeySource::Env {
                var: "ANTHROPIC_API_KEY".into(),
            },
            key: harness9::engine::provider::setup::KeyState::Missing,
            key_text: "missing".into(),
            key_store: "in memory only".into(),
            overridden_by: Vec::new(),
            settings_path: String::new(),
            error: None,
        };
        let c = change_of(&v, &SettingsCmd::Provider(ProviderKind::OpenAi));
        assert_eq!(
            (
                c.provider,
                c.model.as_str(),
                c.base_url.as_str(),
                c.key_source
            ),
            (
                ProviderKind::OpenAi,
                "",
                "",
                KeySource::Env {
                    var: "OPENAI_API_KEY".into()
                }
            )
        );
        let c = change_of(&v, &SettingsCmd::Model("other".into()));
        assert_eq!(
            (c.model.as_str(), c.base_url.as_str()),
            ("other", "http://a")
        );
    }
}
