// The JSON editor for a schema the form cannot show, and the input type of a field.

import { describe, expect, test } from "vitest";
import { fallbackText, inputType, parseFallback } from "./elicit";
import type { FormField } from "./bindings";

const field = (format: "email" | "uri" | "date" | "date-time" | null): FormField => ({
  name: "x",
  label: "x",
  description: null,
  required: false,
  kind: { type: "string", format, minLength: null, maxLength: null },
});

describe("the elicitation dialog's helpers", () => {
  test("a schema the form cannot show falls back to JSON, pre-filled with its defaults", () => {
    const schema = { type: "object", properties: { who: { type: "object" }, n: { type: "integer", default: 3 } } };
    expect(JSON.parse(fallbackText(schema))).toEqual({ n: 3 });
    expect(parseFallback('{"who": {"a": 1}}')).toEqual({ content: { who: { a: 1 } } });
    expect(parseFallback("[1]")).toEqual({ error: 'The answer must be one JSON object, like {"name": "Ada"}' });
    expect("error" in parseFallback("{")).toBe(true);
  });

  test("formats pick the input type", () => {
    expect([field("email"), field("uri"), field("date"), field("date-time"), field(null)].map(inputType)).toEqual([
      "email",
      "url",
      "date",
      "text",
      "text",
    ]);
  });
});
