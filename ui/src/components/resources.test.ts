// The Resources tab and the chat's `@` picker against the mock backend (happy-dom).

import { afterEach, describe, expect, test } from "vitest";
import ChatPane from "./ChatPane.svelte";
import ResourcePanel from "./ResourcePanel.svelte";
import type { ResourceEntry } from "../lib/bindings";
import { $, render, settle, setup, type } from "../test/render";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const readme: ResourceEntry = {
  server: "demo",
  uri: "file:///README.md",
  name: "README.md",
  title: "Readme",
  description: null,
  mimeType: "text/markdown",
  size: 2048,
};
const zip: ResourceEntry = { ...readme, uri: "file:///a.zip", name: "a.zip", title: null, mimeType: "application/zip", size: 10 };

describe("resources", () => {
  test("the tab lists, filters, previews and saves binary data through the backend", async () => {
    const { backend, app } = setup();
    backend.resources = [readme, zip];
    backend.resourceContents["file:///a.zip"] = { parts: [{ kind: "binary", uri: "file:///a.zip", mimeType: "application/zip", bytes: 10 }] };
    const r = render(ResourcePanel, { server: "demo" }, app);
    cleanups.push(r.destroy);
    await settle();
    expect($(r.target, "resource-count").textContent).toContain("2 resources");
    type($(r.target, "resource-filter") as HTMLInputElement, "zip");
    await settle();
    expect($(r.target, "resource-count").textContent).toContain("1 of 2");
    $(r.target, "resource-row").click();
    await settle();
    $(r.target, "resource-download").click();
    await settle();
    expect(backend.calls).toContainEqual(["saveResource", "demo", "file:///a.zip"]);
    expect($(r.target, "resource-saved").textContent).toContain("/home/user/Downloads/a.zip");
  });

  test("@ opens the picker; the pick is a chip that goes with the message", async () => {
    const { backend, app } = setup();
    backend.resources = [readme, zip];
    const r = render(ChatPane, {}, app);
    cleanups.push(r.destroy);
    await settle();
    const input = $(r.target, "chat-input") as HTMLTextAreaElement;
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "@", bubbles: true, cancelable: true }));
    await settle();
    type($(r.target, "attach-filter") as HTMLInputElement, "readme");
    await settle();
    $(r.target, "attach-option").click();
    await settle();
    expect($(r.target, "attachment-chip").textContent).toContain("@demo: Readme");
    type(input, "summarize");
    $(r.target, "chat-send").click();
    await settle();
    expect(backend.calls).toContainEqual(["chatSend", "summarize", [{ server: "demo", uri: "file:///README.md" }]]);
    expect($(r.target, "chat-user-attachment").textContent).toContain("file:///README.md");
  });

  test("a reopened conversation shows the attachments of a message", async () => {
    const { backend, app } = setup();
    backend.chat = {
      ...backend.chat,
      history: [
        { kind: "user", text: "what is this?" },
        { kind: "attachment", server: "demo", uri: "file:///README.md" },
        { kind: "assistant", text: "A readme." },
      ],
    };
    const r = render(ChatPane, {}, app);
    cleanups.push(r.destroy);
    await settle();
    expect($(r.target, "chat-user-attachment").textContent).toContain("@demo: file:///README.md");
  });
});
