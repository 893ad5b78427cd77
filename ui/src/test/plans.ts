// Install plans for the tests of the "Add server" flow (the core makes the real ones).

import type { InstallPlan, PlanVariable } from "../lib/bindings";

const REG = "http://127.0.0.1:9/";

export function variable(name: string, over: Partial<PlanVariable> = {}): PlanVariable {
  return { name, kind: "env", description: null, required: false, secret: false, default: null, choices: [], format: null, placeholder: null, multiple: false, ...over };
}

export function planWith(variables: PlanVariable[], over: Partial<InstallPlan> = {}): InstallPlan {
  return {
    source: { registry: REG, name: "io.github.acme/weather", version: "1.2.0", title: "Weather", description: "Forecasts", repository: null, website: null, package: "npm" },
    name: "weather",
    scope: "local",
    path: "/data/local.json",
    entry: { command: "npx", args: ["-y", "weather@1.2.0"] },
    target: "npx -y weather@1.2.0",
    variables,
    values: {},
    keptSecrets: [],
    replaces: null,
    warnings: [],
    notes: [],
    digest: "d0",
    template: { type: "stdio", command: "npx", args: [], env: [] },
    bundle: null,
    ...over,
  };
}
