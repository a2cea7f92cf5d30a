import { describe, expect, it } from "vitest";
import { isThemePref, resolveTheme } from "./theme";

describe("theme", () => {
  it("resolves the effective theme", () => {
    expect(resolveTheme("system", true)).toBe("dark");
    expect(resolveTheme("system", false)).toBe("light");
    expect(resolveTheme("light", true)).toBe("light");
    expect(resolveTheme("dark", false)).toBe("dark");
  });
  it("validates saved values", () => {
    expect(isThemePref("dark")).toBe(true);
    expect(isThemePref("blue")).toBe(false);
    expect(isThemePref(null)).toBe(false);
  });
});
