// What the ask dialog needs beside the core's form (ElicitForm, built and checked in the
// core): the HTML input type of a field, and the JSON editor used for a schema the form
// cannot show (its first text, and reading it back).

import type { FormField, JsonValue } from "./bindings";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The `<input type>` of a text or number field. */
export function inputType(f: FormField): string {
  if (f.kind.type !== "string") return "text";
  switch (f.kind.format) {
    case "email":
      return "email";
    case "uri":
      return "url";
    case "date":
      return "date";
    default:
      return "text";
  }
}

/** The JSON editor's first text for a schema the form cannot show: its defaults. */
export function fallbackText(schema: unknown): string {
  const out: Record<string, unknown> = {};
  if (isObj(schema) && isObj(schema.properties)) {
    for (const [name, p] of Object.entries(schema.properties)) {
      if (isObj(p) && p.default !== undefined) out[name] = p.default;
    }
  }
  return JSON.stringify(out, null, 2);
}

/** Reads the JSON editor's text: an object, or why not. */
export function parseFallback(text: string): { content: Record<string, JsonValue> } | { error: string } {
  try {
    const v: unknown = JSON.parse(text);
    if (isObj(v)) return { content: v as Record<string, JsonValue> };
    return { error: "The answer must be one JSON object, like {\"name\": \"Ada\"}" };
  } catch (e) {
    return { error: `Not valid JSON: ${(e as Error).message}` };
  }
}
