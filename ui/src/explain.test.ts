import { describe, expect, it } from "vitest";
import { alertLine, explainError } from "./explain";
import { setLocale, t } from "./i18n";

describe("explainError", () => {
  it("gives a shell error the view's sentence and keeps the English detail", () => {
    setLocale("zh-CN");
    const e = explainError({ kind: "io", field: null, line: null, message: "disk full" }, (err) =>
      err.kind === "io" ? "hosts.error.io" : null,
    );
    expect(e.sentence).toBe(t("hosts.error.io"));
    expect(e.detail).toBe("disk full");
    expect(e.kind).toBe("io");
    expect(alertLine("Lead.", e)).toBe(`Lead. ${t("hosts.error.io")}`);
    setLocale("en");
  });

  it("shows the kind when there is neither a sentence nor a message", () => {
    const e = explainError({ kind: "internal", field: null, line: null, message: "  " });
    expect(e.sentence).toBeNull();
    expect(e.detail).toBe("internal");
    expect(alertLine("Lead.", e)).toBe("Lead.");
  });

  it("words a thrown error with no detail", () => {
    const e = explainError(new Error("boom"));
    expect(e).toMatchObject({ sentence: "boom", detail: null, kind: null, error: null });
  });
});
