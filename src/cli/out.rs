//! Everything the CLI prints goes through here, so that no text from a server, a project
//! file or the model reaches the terminal raw: human output is rendered by
//! [`harness9::term_text::block`] (controls, bidi and invisible characters escaped,
//! newline and tab kept), JSON keeps its value with the same characters as `\uXXXX`
//! escapes ([`harness9::term_text::json`]). One-line fields inside a message (names,
//! commands, URLs) are rendered with [`harness9::term_text::Line`] where they are
//! formatted, so a newline in one cannot pose as a line of its own.

use std::io::Write;

use harness9::term_text;

/// Prints a line of human output on stdout.
pub fn out_line(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", term_text::block(text));
}

/// Prints human output on stdout without a newline.
pub fn out_text(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "{}", term_text::block(text));
    let _ = out.flush();
}

/// Prints a line of human output (a message, an error) on stderr.
pub fn err_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", term_text::block(text));
}

/// Prints a value as pretty JSON on stdout.
pub fn json(value: &impl serde::Serialize) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => out_json(&text),
        Err(e) => err_line(&format!("harness9: cannot write JSON: {e}")),
    }
}

/// Reports a failure: the message on stderr (`harness9: MESSAGE`) and, with `--json`, also
/// `{"error": {"code": CODE, "message": MESSAGE}}` on one line of stdout, so that a script
/// reading the JSON sees what failed. `code` is the error's stable code (its `code()`).
pub fn failure(json: bool, code: &str, message: &str) {
    err_line(&format!("harness9: {message}"));
    if json {
        let value = serde_json::json!({"error": {"code": code, "message": message}});
        out_json(&value.to_string());
    }
}

/// Prints serialized JSON (one value) on stdout.
pub fn out_json(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", term_text::json(text));
    let _ = out.flush();
}
