//! Tool-call arguments while the model is still writing them: the JSON text so far,
//! closed into a value as well as it can be, for views that show a call's input as it
//! streams (MCP Apps `tool-input-partial`).
//!
//! What is kept: every complete member and element, and a string value cut where it
//! stops (an unfinished escape dropped). What is left out: an unfinished key, a key
//! without its value, and a number or literal that may still go on (`12` may become
//! `123`). The result is always a prefix of the final value in that sense; it is never
//! more than the text says.

use serde_json::Value;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    Object,
    Array,
}

/// Where the scanner is inside the innermost container.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A value (top level, array element, or after `:`).
    Value,
    /// An object key or `}`.
    Key,
    /// `:` after a key.
    Colon,
    /// `,` or the closing bracket.
    Next,
}

/// The JSON text `text` (a prefix of a JSON object) closed into an object; `None` when
/// nothing of it can be read as one yet.
pub fn close_object(text: &str) -> Option<Value> {
    let closed = close(text)?;
    match serde_json::from_str::<Value>(&closed) {
        Ok(v @ Value::Object(_)) => Some(v),
        Ok(_) | Err(_) => None,
    }
}

/// The text closed, or `None` when it does not start a container.
fn close(text: &str) -> Option<String> {
    let mut stack: Vec<Container> = Vec::new();
    let mut expect = Expect::Value;
    // The longest prefix that is complete up to its open containers, and those containers.
    let mut safe: Option<(usize, Vec<Container>)> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        match expect {
            Expect::Value | Expect::Key => match c {
                '"' => {
                    // A string: find its end.
                    let is_key = expect == Expect::Key;
                    let mut escaped = false;
                    let mut end = None;
                    for (j, d) in chars.by_ref() {
                        if escaped {
                            escaped = false;
                        } else if d == '\\' {
                            escaped = true;
                        } else if d == '"' {
                            end = Some(j);
                            break;
                        }
                    }
                    match end {
                        Some(j) => {
                            if is_key {
                                expect = Expect::Colon;
                            } else {
                                expect = Expect::Next;
                                safe = Some((j + 1, stack.clone()));
                            }
                        }
                        None if is_key || stack.is_empty() => break,
                        None => {
                            // A string value still being written: close it where it stops.
                            let mut body = text.get(i..)?.to_string();
                            drop_unfinished_escape(&mut body);
                            body.push('"');
                            let prefix = text.get(..i)?;
                            return Some(format!("{prefix}{body}{}", closers(&stack)));
                        }
                    }
                }
                '{' | '[' if expect == Expect::Value => {
                    stack.push(if c == '{' {
                        Container::Object
                    } else {
                        Container::Array
                    });
                    expect = if c == '{' { Expect::Key } else { Expect::Value };
                    safe = Some((i + 1, stack.clone()));
                }
                '}' if expect == Expect::Key && stack.last() == Some(&Container::Object) => {
                    stack.pop();
                    expect = Expect::Next;
                    safe = Some((i + 1, stack.clone()));
                }
                ']' if stack.last() == Some(&Container::Array) => {
                    stack.pop();
                    expect = Expect::Next;
                    safe = Some((i + 1, stack.clone()));
                }
                _ if expect == Expect::Value => {
                    // A number or literal: complete only when something follows it.
                    let mut end = text.len();
                    while let Some(&(j, d)) = chars.peek() {
                        if d == ',' || d == '}' || d == ']' || d.is_whitespace() {
                            end = j;
                            break;
                        }
                        chars.next();
                    }
                    if end == text.len() {
                        break;
                    }
                    expect = Expect::Next;
                    safe = Some((end, stack.clone()));
                }
                _ => break,
            },
            Expect::Colon => {
                if c != ':' {
                    break;
                }
                expect = Expect::Value;
            }
            Expect::Next => match (c, stack.last()) {
                (',', Some(Container::Object)) => expect = Expect::Key,
                (',', Some(Container::Array)) => expect = Expect::Value,
                ('}', Some(Container::Object)) | (']', Some(Container::Array)) => {
                    stack.pop();
                    safe = Some((i + 1, stack.clone()));
                    if stack.is_empty() {
                        break;
                    }
                }
                _ => break,
            },
        }
    }
    let (at, open) = safe?;
    let prefix = text.get(..at)?;
    // A prefix that ends after `,` cannot be closed as is; the safe points never do.
    Some(format!("{prefix}{}", closers(&open)))
}

fn closers(stack: &[Container]) -> String {
    stack
        .iter()
        .rev()
        .map(|c| match c {
            Container::Object => '}',
            Container::Array => ']',
        })
        .collect()
}

/// Removes an escape the text stops in the middle of (`\` or `\u12`).
fn drop_unfinished_escape(body: &mut String) {
    let bytes = body.as_bytes();
    // Count the backslashes before the end: an odd run ends in an open escape.
    let trailing = bytes.iter().rev().take_while(|b| **b == b'\\').count();
    if trailing % 2 == 1 {
        body.pop();
        return;
    }
    // `\u` followed by fewer than four hex digits.
    if let Some(pos) = body.rfind("\\u") {
        let before = body.get(..pos).unwrap_or_default();
        let escaped = before.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1;
        let rest = body.get(pos + 2..).unwrap_or_default();
        if !escaped && rest.len() < 4 && rest.bytes().all(|b| b.is_ascii_hexdigit()) {
            body.truncate(pos);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn closed(text: &str) -> Option<Value> {
        close_object(text)
    }

    #[test]
    fn every_prefix_of_an_object_closes_into_a_prefix_of_it() {
        let whole = json!({"title": "Q3 \"board\" \u{e9}", "n": 12, "ok": true, "cells": [1, [2, 3], {"a": null}], "tail": "x\\y"});
        let text = serde_json::to_string_pretty(&whole).unwrap();
        let mut last = json!({});
        for (i, _) in text.char_indices().skip(1) {
            let Some(v) = closed(text.get(..i).unwrap()) else {
                continue;
            };
            let obj = v.as_object().unwrap();
            // Keys only ever grow, in order, and every complete member is the final one.
            for (k, val) in obj {
                let want = &whole[k];
                match (val, want) {
                    (Value::String(s), Value::String(w)) => {
                        assert!(w.starts_with(s.as_str()), "{s:?} of {w:?}")
                    }
                    _ if val == want => {}
                    (Value::Array(_), Value::Array(_)) => {}
                    _ => panic!("{k}: {val} is not a prefix of {want} (at {i})"),
                }
            }
            assert!(
                obj.len() >= last.as_object().unwrap().len(),
                "{v} after {last}"
            );
            last = v;
        }
        assert_eq!(closed(&text), Some(whole));
    }

    #[test]
    fn unfinished_parts_are_left_out() {
        assert_eq!(closed(""), None);
        assert_eq!(closed("{"), Some(json!({})));
        assert_eq!(closed("{\"ti"), Some(json!({})));
        assert_eq!(closed("{\"title\""), Some(json!({})));
        assert_eq!(closed("{\"title\":"), Some(json!({})));
        assert_eq!(closed("{\"title\": \"Q"), Some(json!({"title": "Q"})));
        assert_eq!(closed("{\"a\": 1"), Some(json!({})));
        assert_eq!(closed("{\"a\": 1,"), Some(json!({"a": 1})));
        assert_eq!(closed("{\"a\": tru"), Some(json!({})));
        assert_eq!(closed("{\"a\": [1, 2"), Some(json!({"a": [1]})));
        assert_eq!(
            closed("{\"a\": [\"x\", \"y"),
            Some(json!({"a": ["x", "y"]}))
        );
        assert_eq!(
            closed("{\"a\": {\"b\": \"c\"}, \"d"),
            Some(json!({"a": {"b": "c"}}))
        );
        assert_eq!(closed("{\"a\": \"x\\"), Some(json!({"a": "x"})));
        assert_eq!(closed("{\"a\": \"x\\u00"), Some(json!({"a": "x"})));
        assert_eq!(closed("{\"a\": \"x\\\\"), Some(json!({"a": "x\\"})));
        assert_eq!(closed("[1, 2]"), None);
        assert_eq!(closed("{\"a\": 1} trailing"), Some(json!({"a": 1})));
    }
}
