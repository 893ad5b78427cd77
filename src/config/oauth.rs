//! The `"oauth"` object of a remote (http, sse) server entry: a client registered
//! beforehand with the authorization server, the scopes to ask for and the port of the
//! loopback redirect listener. Values are `${VAR}`-expanded; the client secret is never
//! shown (see [`shown`]).

use serde_json::{Map, Value};

use super::mask::mask_unless_reference;
use super::type_name;
use harness9_mcp::auth::OAuthConfig;

/// The entry's field holding the OAuth settings.
pub const OAUTH_FIELD: &str = "oauth";

const KNOWN: &[&str] = &["clientId", "clientSecret", "scopes", "callbackPort"];

/// Parses `oauth` (absent or null: `None`); `ex` expands `${VAR}` in a field's value.
pub(super) fn parse(
    obj: &Map<String, Value>,
    kind: &str,
    ex: &dyn Fn(&str, &str) -> Result<String, String>,
) -> Result<Option<OAuthConfig>, String> {
    let o = match obj.get(OAUTH_FIELD) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(o)) => o,
        Some(other) => {
            return Err(format!(
                "\"oauth\" must be an object {{\"clientId\": …, \"clientSecret\": …, \"scopes\": […], \"callbackPort\": …}}, not {}",
                type_name(other)
            ))
        }
    };
    if kind == "stdio" {
        return Err("\"oauth\" only applies to remote (http or sse) servers; give a local server its credentials through \"env\"".into());
    }
    if let Some(unknown) = o.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(format!(
            "\"oauth.{unknown}\" is not a known setting; use {}",
            KNOWN.join(", ")
        ));
    }
    let text = |key: &str| -> Result<Option<String>, String> {
        match o.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => {
                let v = ex(&format!("oauth.{key}"), s)?;
                if v.trim().is_empty() {
                    Err(format!(
                        "\"oauth.{key}\" is empty; remove it or give it a value"
                    ))
                } else {
                    Ok(Some(v))
                }
            }
            Some(other) => Err(format!(
                "\"oauth.{key}\" must be a string, not {}",
                type_name(other)
            )),
        }
    };
    let client_id = text("clientId")?;
    let client_secret = text("clientSecret")?;
    if client_secret.is_some() && client_id.is_none() {
        return Err("\"oauth.clientSecret\" is set without \"oauth.clientId\"; add the client ID it belongs to".into());
    }
    let scopes = match o.get("scopes") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => ex(&format!("oauth.scopes[{i}]"), s),
                    other => Err(format!(
                        "\"oauth.scopes[{i}]\" must be a string, not {}",
                        type_name(other)
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .flat_map(|s| s.split_whitespace().map(str::to_string).collect::<Vec<_>>())
                .collect(),
        ),
        // A space-separated string, as OAuth writes scopes.
        Some(Value::String(s)) => Some(
            ex("oauth.scopes", s)?
                .split_whitespace()
                .map(str::to_string)
                .collect(),
        ),
        Some(other) => {
            return Err(format!(
                "\"oauth.scopes\" must be a list of strings, not {}",
                type_name(other)
            ))
        }
    };
    let callback_port = match o.get("callbackPort") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_u64() {
            Some(p) if (1..=65535).contains(&p) => Some(p as u16),
            _ => return Err("\"oauth.callbackPort\" must be a port number from 1 to 65535".into()),
        },
        Some(Value::String(s)) => match ex("oauth.callbackPort", s)?.trim().parse::<u16>() {
            Ok(p) if p > 0 => Some(p),
            _ => return Err("\"oauth.callbackPort\" must be a port number from 1 to 65535".into()),
        },
        Some(other) => {
            return Err(format!(
                "\"oauth.callbackPort\" must be a port number, not {}",
                type_name(other)
            ))
        }
    };
    Ok(Some(OAuthConfig {
        client_id,
        client_secret,
        scopes,
        callback_port,
    }))
}

/// The `oauth` settings as written, for a prompt or a listing: the client secret masked
/// unless it is only a `${VAR}` reference. `None` when the entry has none.
pub fn shown(raw: &Value) -> Option<String> {
    let o = raw.get(OAUTH_FIELD)?.as_object()?;
    let mut parts = Vec::new();
    let as_text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if let Some(v) = o.get("clientId").filter(|v| !v.is_null()) {
        parts.push(format!("client ID {}", as_text(v)));
    }
    if let Some(v) = o.get("clientSecret").filter(|v| !v.is_null()) {
        parts.push(format!(
            "client secret {}",
            mask_unless_reference(&as_text(v))
        ));
    }
    match o.get("scopes") {
        Some(Value::Array(items)) => parts.push(format!(
            "scopes {}",
            items.iter().map(as_text).collect::<Vec<_>>().join(" ")
        )),
        Some(Value::String(s)) => parts.push(format!("scopes {s}")),
        _ => {}
    }
    if let Some(v) = o.get("callbackPort").filter(|v| !v.is_null()) {
        parts.push(format!("callback port {}", as_text(v)));
    }
    Some(if parts.is_empty() {
        "sign-in with defaults".into()
    } else {
        parts.join(", ")
    })
}
