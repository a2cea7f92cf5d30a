import { afterEach, describe, expect, it } from "vitest";
import type { IpcError, IpcErrorKind } from "./bindings";
import { alertLine, ERROR_KINDS, explainError, fieldText, kindText } from "./explain";
import { setLocale, t } from "./i18n";

afterEach(() => setLocale("en"));

const error = (kind: IpcErrorKind, extra: Partial<IpcError> = {}): IpcError => ({
  kind,
  field: null,
  line: null,
  message: "",
  problem: null,
  ...extra,
});

describe("explainError", () => {
  it("gives a shell error the view's sentence and keeps the English detail", () => {
    setLocale("zh-CN");
    const e = explainError(error("io", { message: "disk full" }), (err) => (err.kind === "io" ? "hosts.error.io" : null));
    expect(e.sentence).toBe(t("hosts.error.io"));
    expect(e.detail).toBe("disk full");
    expect(e.detailIsEnglish).toBe(true);
    expect(e.kind).toBe("io");
    expect(alertLine("Lead.", e)).toBe(`Lead. ${t("hosts.error.io")}`);
  });

  it("says the kind, with the field it names, where the view has no sentence", () => {
    const e = explainError(error("invalid_input", { field: "name", message: "name: too long" }));
    expect(e.sentence).toBe("The console did not accept the input. (field: name)");
    expect(e.detail).toBe("name: too long");
    setLocale("zh-CN");
    expect(explainError(error("invalid_input", { field: "name" })).sentence).toBe("控制台不接受所填的内容。（字段：名称）");
    expect(kindText(error("invalid_input", { field: "demand", line: 3 }))).toBe("控制台不接受所填的内容。（字段：需求，第 3 行）");
    // A field with no word is shown as the file names it.
    expect(fieldText("limits.max_gpus")).toBe("limits.max_gpus");
  });

  it("words a host's failure from its problem, in the operator's language", () => {
    setLocale("zh-CN");
    const e = explainError(
      error("timeout", {
        message: "no answer from http://gpu-a:7070 within 2000 ms",
        problem: { kind: "timeout", url: "http://gpu-a:7070", timeout_ms: 2000 },
      }),
    );
    expect(e.sentence).toBe("主机没有及时响应。");
    expect(e.detailIsEnglish).toBe(false);
    expect(e.detail).toMatch(/[\u4e00-\u9fff]/);
    expect(e.detail).toContain("2000");
    expect(e.detail).not.toContain("no answer");
  });

  it("says a refusal Rust words in the operator's language, not the shell's English", () => {
    const taken = error("invalid_input", {
      field: "name",
      message: "name: a host named `gpu-01` is already registered",
      words: { key: "hosts.refuse.exists", args: [{ name: "name", value: { kind: "text", value: "gpu-01" } }] },
    });
    setLocale("zh-CN");
    const explained = explainError(taken);
    expect(explained.detailIsEnglish).toBe(false);
    expect(explained.detail).toBe("已有名为“gpu-01”的主机：请换一个名称，或编辑该主机。");
    expect(explained.detail).not.toMatch(/registered|name:/);
  });

  it("has no detail when the shell sent no words", () => {
    const e = explainError(error("internal", { message: "  " }));
    expect(e.sentence).toBe(t("error.kind.internal"));
    expect(e.detail).toBeNull();
  });

  it("words a thrown error with no detail", () => {
    const e = explainError(new Error("boom"));
    expect(e).toMatchObject({ sentence: "boom", detail: null, kind: null, error: null });
  });
});

describe("every kind of shell error", () => {
  it("has a sentence in Chinese in zh-CN, and in English in en", () => {
    const kinds = Object.keys(ERROR_KINDS) as IpcErrorKind[];
    expect(kinds.length).toBe(23);
    for (const kind of kinds) {
      setLocale("en");
      const en = kindText(error(kind, { field: "url" }));
      setLocale("zh-CN");
      const zh = kindText(error(kind, { field: "url" }));
      expect(zh, kind).not.toBe(en);
      expect(zh, kind).toMatch(/[\u4e00-\u9fff]/);
      expect(zh, kind).toContain("Agent 地址");
      // Nothing English but the names the product keeps (Agent, API, Ebb, GPU).
      expect(zh.replace(/\b(Agent|API|Ebb|GPU)\b/g, ""), kind).not.toMatch(/[A-Za-z]{3,}/);
    }
  });
});
