//! Server prompts as slash commands: `/server:prompt name=value name="two words"`.
//!
//! Tab completes, in turn, the command (built-in commands and every prompt of every
//! connected server), an argument's name, and an argument's value; values come from the
//! server (`completion/complete`, asked for by [`Action::Complete`] with the arguments
//! filled so far as context) and arrive in [`completion_done`]. Enter checks the command
//! before anything is sent: an unknown prompt or argument, or a missing required one, is
//! a note in the transcript and the input stays for fixing. Pure: the functions work on the
//! input line, the hint ([`SlashState`]) and the prompts they are given.

use harness9::host::catalog::{FeatureError, ServerPrompt};
use serde_json::{Map, Value};

use super::model::{Action, COMMANDS};

/// Most candidates kept from one completion (the spec caps a server's answer at 100).
pub const MAX_CANDIDATES: usize = 100;

/// What the hint popup shows beside the input.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SlashState {
    /// What Tab found (commands, `name=` argument names, or values).
    pub candidates: Vec<String>,
    /// A one-line note: a completion under way, no suggestions, and the like.
    pub note: Option<String>,
    /// The input a value completion was asked for; an answer for another input is dropped.
    pub waiting: Option<String>,
}

impl SlashState {
    pub fn clear(&mut self) {
        *self = SlashState::default();
    }
}

/// One word of the command line, unquoted, and where it starts in the input.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub text: String,
    pub start: usize,
}

/// Splits `input` at whitespace outside quotes (`"…"` with `\"` and `\\` escapes, or
/// `'…'`). Also says whether the input ends in whitespace outside quotes (a new word
/// begins).
pub fn tokenize(input: &str) -> (Vec<Token>, bool) {
    let mut tokens: Vec<Token> = Vec::new();
    let mut current: Option<Token> = None;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in input.char_indices() {
        if escaped {
            escaped = false;
            if let Some(t) = current.as_mut() {
                t.text.push(c);
            }
            continue;
        }
        match (quote, c) {
            (Some('"'), '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.get_or_insert_with(|| new_token(i)).text.push(c),
            (None, '"' | '\'') => {
                current.get_or_insert_with(|| new_token(i));
                quote = Some(c);
            }
            (None, c) if c.is_whitespace() => tokens.extend(current.take()),
            (None, c) => current.get_or_insert_with(|| new_token(i)).text.push(c),
        }
    }
    let open = current.is_some() || quote.is_some();
    tokens.extend(current);
    let trailing_space = !open && input.ends_with(char::is_whitespace);
    (tokens, trailing_space)
}

fn new_token(start: usize) -> Token {
    Token {
        text: String::new(),
        start,
    }
}

/// `value` as one word: quoted when it holds whitespace or quotes.
pub fn quote(value: &str) -> String {
    if !value.is_empty() && !value.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
        return value.to_string();
    }
    let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
    format!("\"{escaped}\"")
}

/// The command that names `p`.
pub fn command_of(p: &ServerPrompt) -> String {
    format!("/{}:{}", p.server, p.prompt.name)
}

/// The prompt the input's command names, if it names one.
pub fn prompt_of<'a>(prompts: &'a [ServerPrompt], input: &str) -> Option<&'a ServerPrompt> {
    let (tokens, _) = tokenize(input);
    let command = tokens.first()?;
    prompts.iter().find(|p| command_of(p) == command.text)
}

fn common_prefix(words: &[String]) -> String {
    let Some(first) = words.first() else {
        return String::new();
    };
    let mut end = first.len();
    for w in &words[1..] {
        end = first
            .char_indices()
            .zip(w.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map_or(0, |((i, a), _)| i + a.len_utf8())
            .min(end);
    }
    first.get(..end).unwrap_or_default().to_string()
}

/// Replaces the word being typed (from `start`) with `word`.
fn replace_tail(line: &mut String, start: usize, word: &str) {
    line.truncate(start);
    line.push_str(word);
}

/// Tab with an input line (`line`) that starts with `/`: completes it, or asks the server
/// for values. `hint` is what the popup shows.
pub fn tab(line: &mut String, hint: &mut SlashState, prompts: &[ServerPrompt]) -> Option<Action> {
    hint.clear();
    let input = line.clone();
    let (tokens, trailing) = tokenize(&input);
    if tokens.len() <= 1 && !trailing {
        complete_command(line, hint, prompts);
        return None;
    }
    let Some(prompt) = prompt_of(prompts, &input).cloned() else {
        hint.note = Some(format!(
            "no prompt {}; Tab after / lists the commands and prompts",
            tokens[0].text
        ));
        return None;
    };
    let (current, start) = match (trailing, tokens.last()) {
        (false, Some(t)) if tokens.len() > 1 => (t.text.clone(), t.start),
        _ => (String::new(), input.len()),
    };
    let filled = arguments(&tokens[1..], if trailing { None } else { Some(start) });
    match current.split_once('=') {
        None => {
            let names: Vec<String> = prompt
                .prompt
                .arguments
                .iter()
                .filter(|a| !filled.contains_key(&a.name) && a.name.starts_with(&current))
                .map(|a| format!("{}=", a.name))
                .collect();
            match names.as_slice() {
                [] => {
                    hint.note = Some(if prompt.prompt.arguments.is_empty() {
                        "this prompt takes no arguments; Enter sends it".to_string()
                    } else {
                        "no more arguments; Enter sends the prompt".to_string()
                    })
                }
                [only] => replace_tail(line, start, only),
                _ => {
                    let prefix = common_prefix(&names);
                    if prefix.len() > current.len() {
                        replace_tail(line, start, &prefix);
                    }
                    hint.candidates = names;
                }
            }
            None
        }
        Some((name, value)) => {
            if !prompt.prompt.arguments.iter().any(|a| a.name == name) {
                hint.note = Some(format!(
                    "{} has no argument \"{name}\"",
                    command_of(&prompt)
                ));
                return None;
            }
            hint.note = Some(format!("asking {} for values of {name}…", prompt.server));
            hint.waiting = Some(input.clone());
            Some(Action::Complete {
                server: prompt.server.clone(),
                prompt: prompt.prompt.name.clone(),
                argument: name.to_string(),
                value: value.to_string(),
                context: filled,
                input,
            })
        }
    }
}

fn complete_command(line: &mut String, hint: &mut SlashState, prompts: &[ServerPrompt]) {
    let input = line.clone();
    let mut all: Vec<String> = COMMANDS.iter().map(|c| c.to_string()).collect();
    all.extend(prompts.iter().map(command_of));
    let found: Vec<String> = all.into_iter().filter(|c| c.starts_with(&input)).collect();
    match found.as_slice() {
        [] => {
            hint.note = Some(format!(
                "no command starts with {input}{}",
                if prompts.is_empty() {
                    " (no connected server offers prompts)"
                } else {
                    ""
                }
            ))
        }
        [only] => {
            let is_prompt = prompts.iter().any(|p| command_of(p) == *only);
            *line = only.clone();
            if is_prompt {
                line.push(' ');
            }
        }
        _ => {
            let prefix = common_prefix(&found);
            if prefix.len() > input.len() {
                *line = prefix;
            }
            hint.candidates = found;
        }
    }
}

/// The `name=value` words as arguments, leaving out the word starting at `skip`.
fn arguments(words: &[Token], skip: Option<usize>) -> Map<String, Value> {
    words
        .iter()
        .filter(|t| Some(t.start) != skip)
        .filter_map(|t| t.text.split_once('='))
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect()
}

/// The server's answer to [`Action::Complete`] asked for the input line `input`; dropped
/// when the line (`line`) has changed since.
pub fn completion_done(
    line: &mut String,
    hint: &mut SlashState,
    input: &str,
    result: Result<Vec<String>, FeatureError>,
) {
    if hint.waiting.as_deref() != Some(input) || line != input {
        return;
    }
    hint.clear();
    let mut values = match result {
        Ok(v) => v,
        Err(e) => {
            hint.note = Some(format!("no suggestions: {e}"));
            return;
        }
    };
    values.truncate(MAX_CANDIDATES);
    let (tokens, _) = tokenize(input);
    let Some(last) = tokens.last() else { return };
    let Some((name, typed)) = last.text.split_once('=') else {
        return;
    };
    let (name, typed) = (name.to_string(), typed.to_string());
    match values.as_slice() {
        [] => hint.note = Some(format!("no suggestions for {name}")),
        [only] => {
            let word = format!("{name}={} ", quote(only));
            replace_tail(line, last.start, &word);
        }
        _ => {
            let prefix = common_prefix(&values);
            if prefix.len() > typed.len() {
                replace_tail(line, last.start, &format!("{name}={}", quote(&prefix)));
            }
            hint.candidates = values;
        }
    }
}

/// What Enter on a prompt command does.
#[derive(Debug, Clone, PartialEq)]
pub enum Entered {
    /// Send the prompt ([`Action::SendPrompt`]).
    Send(Action),
    /// Keep the line in the input: a turn is running.
    Keep,
    /// Keep the line in the input, and say in the transcript what is wrong with it.
    Wrong(String),
}

/// Enter on a line that starts with `/` and is not a built-in command. `Some` when the
/// line names a prompt (or looks like it should); `busy`: a turn is running.
pub fn enter(prompts: &[ServerPrompt], text: &str, busy: bool) -> Option<Entered> {
    let (tokens, _) = tokenize(text);
    let command = tokens.first()?.text.clone();
    let Some(prompt) = prompts.iter().find(|p| command_of(p) == command).cloned() else {
        if command.contains(':') {
            return Some(Entered::Wrong(format!(
                "no prompt {command}; Tab after / lists the prompts of the connected servers"
            )));
        }
        return None;
    };
    let mut args = Map::new();
    for t in &tokens[1..] {
        let Some((name, value)) = t.text.split_once('=') else {
            return Some(Entered::Wrong(format!(
                "\"{}\" is not an argument; write name=value (quote values with spaces: name=\"two words\")",
                t.text
            )));
        };
        if !prompt.prompt.arguments.iter().any(|a| a.name == name) {
            let known: Vec<&str> = prompt
                .prompt
                .arguments
                .iter()
                .map(|a| a.name.as_str())
                .collect();
            return Some(Entered::Wrong(format!(
                "{command} has no argument \"{name}\"; its arguments: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
        args.insert(name.to_string(), Value::String(value.to_string()));
    }
    let missing = harness9::harness::missing_arguments(&prompt.prompt, &args);
    if !missing.is_empty() {
        let err = harness9::harness::PromptError::MissingArguments {
            server: prompt.server.clone(),
            name: prompt.prompt.name.clone(),
            missing,
        };
        return Some(Entered::Wrong(format!("{err}; nothing was sent")));
    }
    if busy {
        return Some(Entered::Keep);
    }
    Some(Entered::Send(Action::SendPrompt {
        server: prompt.server,
        name: prompt.prompt.name,
        arguments: args,
        text: text.to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(input: &str) -> (Vec<String>, bool) {
        let (t, trailing) = tokenize(input);
        (t.into_iter().map(|t| t.text).collect(), trailing)
    }

    #[test]
    fn words_split_outside_quotes() {
        assert_eq!(
            words("/ev:p a=1 b=\"two words\" c='x y' "),
            (
                vec![
                    "/ev:p".to_string(),
                    "a=1".into(),
                    "b=two words".into(),
                    "c=x y".into()
                ],
                true
            )
        );
        assert_eq!(
            words("/ev:p b=\"open quote "),
            (vec!["/ev:p".to_string(), "b=open quote ".into()], false)
        );
        assert_eq!(
            words(r#"/p a="say \"hi\"""#),
            (vec!["/p".to_string(), r#"a=say "hi""#.into()], false)
        );
        assert_eq!(quote("New York"), "\"New York\"");
        assert_eq!(quote("Paris"), "Paris");
        assert_eq!(quote(""), "\"\"");
        assert_eq!(
            common_prefix(&["Alice".into(), "Alan".into()]),
            "Al".to_string()
        );
    }
}
