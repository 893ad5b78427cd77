//! The server features beyond tools, on one connection: resources (listing, templates,
//! reading, subscriptions), prompts, argument completion and the logging level, plus the
//! roots notification. Listings follow `nextCursor` to the end with the same guards as
//! `tools/list` (a repeated cursor or too many pages stop them with an error).

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::{pages, Client, ClientError, Params, RequestOptions, MAX_TOOL_PAGES};
use crate::protocol::era::Era;
use crate::protocol::features::{
    CompleteResult, Completion, CompletionRef, GetPromptResult, LogLevel, Prompt, PromptsPage,
    ReadResourceResult, Resource, ResourceTemplate, ResourcesPage, TemplatesPage,
};

/// Most pages a resources or prompts listing may take before we call the server broken.
pub const MAX_LIST_PAGES: usize = MAX_TOOL_PAGES;

impl Client {
    /// Whether the server declared a capability in `initialize` (`resources`, `prompts`,
    /// `logging`, `completions`, ...).
    pub fn has_capability(&self, name: &str) -> bool {
        self.capabilities().contains_key(name)
    }

    /// Whether the server lets clients subscribe to resource updates (the modern era asks
    /// for them on the `subscriptions/listen` stream, which every resource server has).
    pub fn can_subscribe(&self) -> bool {
        if self.era() == Era::Modern {
            return self.has_capability("resources");
        }
        self.capabilities()
            .get("resources")
            .and_then(|r| r.get("subscribe"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// Every resource, all pages. A server without the `resources` capability has none.
    pub async fn list_resources(
        &self,
        timeout: Option<Duration>,
    ) -> Result<Vec<Resource>, ClientError> {
        if !self.has_capability("resources") {
            return Ok(Vec::new());
        }
        self.list_pages(
            "resources/list",
            MAX_LIST_PAGES,
            timeout,
            |p: ResourcesPage| (p.resources, p.next_cursor),
        )
        .await
    }

    /// Every resource template, all pages.
    pub async fn list_resource_templates(
        &self,
        timeout: Option<Duration>,
    ) -> Result<Vec<ResourceTemplate>, ClientError> {
        if !self.has_capability("resources") {
            return Ok(Vec::new());
        }
        self.list_pages(
            "resources/templates/list",
            MAX_LIST_PAGES,
            timeout,
            |p: TemplatesPage| (p.resource_templates, p.next_cursor),
        )
        .await
    }

    /// Every prompt, all pages. A server without the `prompts` capability has none.
    pub async fn list_prompts(
        &self,
        timeout: Option<Duration>,
    ) -> Result<Vec<Prompt>, ClientError> {
        if !self.has_capability("prompts") {
            return Ok(Vec::new());
        }
        self.list_pages("prompts/list", MAX_LIST_PAGES, timeout, |p: PromptsPage| {
            (p.prompts, p.next_cursor)
        })
        .await
    }

    /// Reads one resource (text and/or base64 blobs).
    pub async fn read_resource(
        &self,
        uri: &str,
        timeout: Option<Duration>,
    ) -> Result<ReadResourceResult, ClientError> {
        self.call("resources/read", json!({ "uri": uri }), timeout)
            .await
    }

    /// Asks for `notifications/resources/updated` about `uri` (modern era: on a new
    /// `subscriptions/listen` stream that names it).
    pub async fn subscribe(&self, uri: &str, timeout: Option<Duration>) -> Result<(), ClientError> {
        if self.era() == Era::Modern {
            return self.follow(uri, true).await;
        }
        self.call::<Value>("resources/subscribe", json!({ "uri": uri }), timeout)
            .await
            .map(drop)
    }

    pub async fn unsubscribe(
        &self,
        uri: &str,
        timeout: Option<Duration>,
    ) -> Result<(), ClientError> {
        if self.era() == Era::Modern {
            return self.follow(uri, false).await;
        }
        self.call::<Value>("resources/unsubscribe", json!({ "uri": uri }), timeout)
            .await
            .map(drop)
    }

    /// Gets one prompt with its arguments filled in.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        timeout: Option<Duration>,
    ) -> Result<GetPromptResult, ClientError> {
        let params = json!({ "name": name, "arguments": arguments });
        self.call("prompts/get", params, timeout).await
    }

    /// Suggestions for the value of `argument` (a prompt argument or a template variable)
    /// as typed so far; `context` holds the other arguments already chosen.
    pub async fn complete(
        &self,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
        context: &Map<String, Value>,
        timeout: Option<Duration>,
    ) -> Result<Completion, ClientError> {
        let mut params = json!({
            "ref": reference,
            "argument": {"name": argument, "value": value},
        });
        if !context.is_empty() {
            params["context"] = json!({ "arguments": context });
        }
        let result: CompleteResult = self.call("completion/complete", params, timeout).await?;
        Ok(result.completion)
    }

    /// `logging/setLevel`: the least severe level the server should send. Modern era: every
    /// request from now on names it in its `_meta`.
    pub async fn set_logging_level(
        &self,
        level: LogLevel,
        timeout: Option<Duration>,
    ) -> Result<(), ClientError> {
        if self.era() == Era::Modern {
            self.inner.log_level.store(
                super::level_code(level),
                std::sync::atomic::Ordering::Relaxed,
            );
            return Ok(());
        }
        self.call::<Value>("logging/setLevel", json!({ "level": level }), timeout)
            .await
            .map(drop)
    }

    /// Sends `notifications/roots/list_changed` when this connection announced it (does
    /// nothing otherwise).
    pub fn notify_roots_changed(&self) -> Result<(), ClientError> {
        let announced = self.era() == Era::Legacy
            && self
                .inner
                .handler
                .as_ref()
                .is_some_and(|h| h.handles().roots_list_changed);
        if announced {
            self.inner
                .notify("notifications/roots/list_changed", None)?;
        }
        Ok(())
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<T, ClientError> {
        let opts = RequestOptions {
            timeout,
            ..RequestOptions::default()
        };
        let body = self
            .inner
            .request(method, Params::Value(params), opts, true)
            .await?;
        body.parse(method)
    }

    /// Every item of a listing, all pages, with the start-up timeout's setting named when
    /// a page takes too long ([`pages::all_pages`]). On a transport with sessions, a digest
    /// of the list is kept, to tell after a lost session whether it changed.
    pub(super) async fn list_pages<P: DeserializeOwned, T: Serialize>(
        &self,
        method: &str,
        max_pages: usize,
        timeout: Option<Duration>,
        split: impl Fn(P) -> (Vec<T>, Option<String>),
    ) -> Result<Vec<T>, ClientError> {
        let opts = RequestOptions {
            timeout,
            timeout_field: Some(crate::settings::STARTUP_TIMEOUT_FIELD),
            progress: None,
        };
        let inner = &*self.inner;
        let items = pages::all_pages(
            method,
            max_pages,
            move |params| inner.request(method, params, opts.clone(), true),
            split,
        )
        .await?;
        if let Some(mut digest) = inner.recovery.digest() {
            digest.add(&items);
            inner.recovery.listed(method, Some(digest));
        }
        Ok(items)
    }
}
