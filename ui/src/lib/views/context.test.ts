// What the window tells a view about itself: the app's theme and variables under the
// spec's names, the modes both sides support, the room it has, and the platform.

import { describe, expect, test } from "vitest";
import { hostContext, styleVariables, type Surroundings } from "./context";

const APP_VARS: Record<string, string> = { "--bg-panel": " #1c2028", "--fg": "#e3e7ee", "--font": "system-ui, sans-serif", "--radius": "6px" };

const base: Surroundings = {
  theme: "dark",
  read: (name) => APP_VARS[name] ?? "",
  displayMode: "inline",
  width: 612.4,
  maxHeight: 2000,
  locale: "de-DE",
  timeZone: "Europe/Berlin",
  userAgent: "harness9/test",
  touch: false,
};

describe("the host context", () => {
  test("the app's variables under the spec's names; unset ones left out", () => {
    const v = styleVariables(base.read) as Record<string, string>;
    expect(v["--color-background-primary"]).toBe("#1c2028");
    expect(v["--color-text-primary"]).toBe("#e3e7ee");
    expect(v["--font-sans"]).toBe("system-ui, sans-serif");
    expect(v["--border-radius-md"]).toBe("6px");
    expect("--color-text-secondary" in v).toBe(false);
  });

  test("inline: the width is fixed, the height may grow up to the limit; desktop, locale, zone", () => {
    const c = hostContext(base);
    expect(c.theme).toBe("dark");
    expect(c.containerDimensions).toEqual({ width: 612, maxHeight: 2000 });
    expect(c.platform).toBe("desktop");
    expect([c.locale, c.timeZone]).toEqual(["de-DE", "Europe/Berlin"]);
    expect(c.availableDisplayModes).toEqual(["inline", "fullscreen"]);
  });

  test("full screen: both sides fixed; only the modes the view supports are offered", () => {
    const c = hostContext({ ...base, displayMode: "fullscreen", width: 1280, maxHeight: 800, viewModes: ["inline", "pip"] });
    expect(c.containerDimensions).toEqual({ width: 1280, height: 800 });
    expect(c.availableDisplayModes).toEqual(["inline"]);
  });
});
