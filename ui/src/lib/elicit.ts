// An elicitation's requested schema as a form: one field per property (strings with the
// email/uri/date/date-time formats, numbers, integers, booleans, single-select enums with
// titles, multi-select arrays of enums), the initial values (the schema's defaults), and
// the content built from the form with a message for every field that does not fit.
// A schema the form cannot show gives `null`: the dialog then offers a JSON editor.

import type { JsonValue } from "./bindings";

export interface Choice {
  value: string;
  label: string;
}

interface Base {
  name: string;
  label: string;
  description: string | null;
  required: boolean;
}

export type ElicitField =
  | (Base & { kind: "string"; format: "email" | "uri" | "date" | "date-time" | null; minLength: number | null; maxLength: number | null })
  | (Base & { kind: "number" | "integer"; minimum: number | null; maximum: number | null })
  | (Base & { kind: "boolean" })
  | (Base & { kind: "enum"; choices: Choice[] })
  | (Base & { kind: "multi"; choices: Choice[]; minItems: number | null; maxItems: number | null });

/** What a control holds: text for strings, numbers and enums, a flag, or the chosen values. */
export type ElicitValue = string | boolean | string[];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** The choices of an enum schema: `enum` (with legacy `enumNames`) or `oneOf`/`anyOf` of `{const, title}`. */
function choices(s: Obj): Choice[] | null {
  if (Array.isArray(s.enum)) {
    if (s.enum.length === 0 || !s.enum.every((v) => typeof v === "string")) return null;
    const names = Array.isArray(s.enumNames) ? s.enumNames : [];
    return (s.enum as string[]).map((value, i) => ({ value, label: str(names[i]) ?? value }));
  }
  const options = Array.isArray(s.oneOf) ? s.oneOf : Array.isArray(s.anyOf) ? s.anyOf : null;
  if (!options || options.length === 0) return null;
  const out: Choice[] = [];
  for (const o of options) {
    if (!isObj(o) || typeof o.const !== "string") return null;
    out.push({ value: o.const, label: str(o.title) ?? o.const });
  }
  return out;
}

const FORMATS = ["email", "uri", "date", "date-time"] as const;

function field(name: string, s: unknown, required: boolean): ElicitField | null {
  if (!isObj(s)) return null;
  const base: Base = { name, label: str(s.title) ?? name, description: str(s.description), required };
  const picks = choices(s);
  if (!picks && (s.enum !== undefined || s.oneOf !== undefined || s.anyOf !== undefined)) return null;
  if (picks && (s.type === undefined || s.type === "string")) return { ...base, kind: "enum", choices: picks };
  switch (s.type) {
    case "string": {
      const format = s.format === undefined ? null : FORMATS.find((f) => f === s.format);
      if (format === undefined) return null;
      return { ...base, kind: "string", format, minLength: num(s.minLength), maxLength: num(s.maxLength) };
    }
    case "number":
    case "integer":
      return { ...base, kind: s.type, minimum: num(s.minimum), maximum: num(s.maximum) };
    case "boolean":
      return { ...base, kind: "boolean" };
    case "array": {
      const items = isObj(s.items) ? choices(s.items) : null;
      if (!items) return null;
      return { ...base, kind: "multi", choices: items, minItems: num(s.minItems), maxItems: num(s.maxItems) };
    }
    default:
      return null;
  }
}

/** The form's fields, or `null` when the schema is not a flat object the form can show. */
export function elicitFields(schema: unknown): ElicitField[] | null {
  if (!isObj(schema) || (schema.type !== undefined && schema.type !== "object")) return null;
  const props = schema.properties ?? {};
  if (!isObj(props)) return null;
  const required = Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [];
  const out: ElicitField[] = [];
  for (const [name, s] of Object.entries(props)) {
    const f = field(name, s, required.includes(name));
    if (!f) return null;
    out.push(f);
  }
  return out;
}

function defaultOf(schema: unknown, name: string): unknown {
  if (!isObj(schema) || !isObj(schema.properties)) return undefined;
  const p = schema.properties[name];
  return isObj(p) ? p.default : undefined;
}

/** Every control's first value: the schema's default when it has one (SEP-1034). */
export function initialValues(schema: unknown, fields: ElicitField[]): Record<string, ElicitValue> {
  const out: Record<string, ElicitValue> = {};
  for (const f of fields) {
    const d = defaultOf(schema, f.name);
    switch (f.kind) {
      case "boolean":
        out[f.name] = d === true;
        break;
      case "multi":
        out[f.name] = Array.isArray(d) ? d.filter((v): v is string => typeof v === "string") : [];
        break;
      case "string":
      case "enum":
        out[f.name] = typeof d === "string" ? d : "";
        break;
      case "number":
      case "integer":
        out[f.name] = typeof d === "number" ? String(d) : "";
        break;
    }
  }
  return out;
}

function checkString(f: ElicitField & { kind: "string" }, text: string): string | null {
  if (f.minLength !== null && text.length < f.minLength) return `At least ${f.minLength} characters`;
  if (f.maxLength !== null && text.length > f.maxLength) return `At most ${f.maxLength} characters`;
  switch (f.format) {
    case "email":
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text) ? null : "Enter an email address, like ada@example.com";
    case "uri":
      try {
        new URL(text);
        return null;
      } catch {
        return "Enter a full URL, like https://example.com";
      }
    case "date":
      return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text)) ? null : "Enter a date as YYYY-MM-DD";
    case "date-time":
      return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(text) && !Number.isNaN(Date.parse(text))
        ? null
        : "Enter a date and time as YYYY-MM-DDTHH:MM:SSZ";
    case null:
      return null;
  }
}

/**
 * The content to accept with, and a message per field that does not fit. Empty optional
 * fields are left out (the core fills in their defaults).
 */
export function buildContent(
  fields: ElicitField[],
  values: Record<string, ElicitValue>,
): { content: Record<string, JsonValue>; errors: Record<string, string> } {
  const content: Record<string, JsonValue> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const v = values[f.name];
    switch (f.kind) {
      case "boolean":
        content[f.name] = v === true;
        break;
      case "multi": {
        const picked = Array.isArray(v) ? v : [];
        if (picked.length === 0 && !f.required) break;
        if (picked.length === 0) errors[f.name] = "Choose at least one";
        else if (f.minItems !== null && picked.length < f.minItems) errors[f.name] = `Choose at least ${f.minItems}`;
        else if (f.maxItems !== null && picked.length > f.maxItems) errors[f.name] = `Choose at most ${f.maxItems}`;
        else content[f.name] = picked;
        break;
      }
      case "string":
      case "enum":
      case "number":
      case "integer": {
        const text = typeof v === "string" ? (f.kind === "string" ? v : v.trim()) : "";
        if (text === "") {
          if (f.required) errors[f.name] = f.kind === "enum" ? "Choose one" : "Required";
          break;
        }
        if (f.kind === "string") {
          const e = checkString(f, text);
          if (e) errors[f.name] = e;
          else content[f.name] = text;
        } else if (f.kind === "enum") {
          if (f.choices.some((c) => c.value === text)) content[f.name] = text;
          else errors[f.name] = "Choose one of the options";
        } else {
          const n = Number(text);
          if (!Number.isFinite(n)) errors[f.name] = "Enter a number";
          else if (f.kind === "integer" && !Number.isInteger(n)) errors[f.name] = "Enter a whole number";
          else if (f.minimum !== null && n < f.minimum) errors[f.name] = `At least ${f.minimum}`;
          else if (f.maximum !== null && n > f.maximum) errors[f.name] = `At most ${f.maximum}`;
          else content[f.name] = n;
        }
        break;
      }
    }
  }
  return { content, errors };
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
