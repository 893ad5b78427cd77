//! What goes over the wire, independent of how: the protocol's types, the optional
//! features' messages, JSON-RPC framing, the two eras, the requests a server sends a
//! client, tasks in both generations, and the checks on a user's answer to an elicitation form. Nothing here knows a
//! transport, a connection or the app.

// Date and time checks parse characters; nothing in here slices text by bytes.
pub mod apps;
pub mod elicit_form;
pub mod era;
pub mod features;
pub mod jsonrpc;
pub mod requests;
pub mod schema_text;
pub mod tasks;
pub mod types;
