import { describe, expect, it } from "vitest";
import { errorKindKey, HOST_FIELDS, fieldOfKind, formatLabels, problemsAt, shortFingerprint, tokenToSend } from "./hosts";
import type { IpcErrorKind } from "./bindings";
import { catalogs, setLocale, type MessageKey } from "./i18n";
import { fieldOf } from "./ipc";
import { tokenStoreText } from "./reasons";

const FP = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89";

describe("formatLabels", () => {
  it("sorts keys and skips missing values", () => {
    expect(formatLabels({})).toBe("");
    expect(formatLabels({ b: "2", a: "1", c: undefined })).toBe("a=1, b=2");
  });
});

describe("shortFingerprint", () => {
  it("keeps the first three and the last two bytes", () => {
    expect(shortFingerprint(FP)).toBe("AB:CD:EF…67:89");
  });
  it("leaves short text alone", () => {
    expect(shortFingerprint("AB:CD")).toBe("AB:CD");
    expect(shortFingerprint(" xyz ")).toBe("xyz");
  });
});

describe("problemsAt", () => {
  it("puts the check's problems at the form's fields, in the form's order, leaving out a field it lacks", () => {
    const words = { key: "hosts.check.urlScheme", args: [] };
    const problems = [
      { field: "url", words },
      { field: "name", words },
      { field: "nowhere", words },
    ];
    expect(problemsAt(problems, HOST_FIELDS).map((p) => p.field)).toEqual(["name", "url"]);
    expect(problemsAt([], HOST_FIELDS)).toEqual([]);
  });
});

describe("tokenToSend", () => {
  it("sends a typed token trimmed, keeps the stored one when empty, removes it on request", () => {
    expect(tokenToSend(" s3cret ", false)).toBe("s3cret");
    expect(tokenToSend("s3cret", true)).toBe("s3cret");
    expect(tokenToSend("", false)).toBeNull();
    expect(tokenToSend("  ", false)).toBeNull();
    expect(tokenToSend("", true)).toBe("");
  });
});

describe("fieldOf, with the host form's fields", () => {
  const invalid = (field: string | null) => ({ kind: "invalid_input" as const, field, line: null, message: "m", problem: null });
  it("names the form field the error carries", () => {
    expect(fieldOf(invalid("url"), HOST_FIELDS)).toBe("url");
    expect(fieldOf(invalid("fingerprint"), HOST_FIELDS)).toBe("fingerprint");
  });

  it("is null for a field the form does not have, or none", () => {
    expect(fieldOf(invalid("host"), HOST_FIELDS)).toBeNull();
    expect(fieldOf(invalid(null), HOST_FIELDS)).toBeNull();
    expect(fieldOf(null, HOST_FIELDS)).toBeNull();
  });
});

describe("error kinds", () => {
  // The kinds the catalog words (errorKindKey is typed over IpcErrorKind, so none is missing).
  const kinds = Object.keys(catalogs.en)
    .filter((key) => key.startsWith("hosts.error."))
    .map((key) => key.slice("hosts.error.".length) as IpcErrorKind);

  it("has its own sentence, in both languages, for every kind the IPC sends", () => {
    expect(kinds.length).toBeGreaterThanOrEqual(18);
    const keys = new Set<MessageKey>();
    for (const kind of kinds) {
      const key = errorKindKey(kind);
      expect(key, kind).toBe(`hosts.error.${kind}`);
      expect(catalogs.en[key]).toBeTruthy();
      expect(catalogs["zh-CN"][key]).toMatch(/[\u4e00-\u9fff]/);
      keys.add(key);
    }
    expect(keys.size).toBe(kinds.length);
  });

  it("points connection failures at the field to fix", () => {
    expect(fieldOfKind("refused")).toBe("url");
    expect(fieldOfKind("dns")).toBe("url");
    expect(fieldOfKind("tls")).toBe("fingerprint");
    expect(fieldOfKind("unauthorized")).toBe("token");
    expect(fieldOfKind("internal")).toBeNull();
  });
});

describe("tokenStoreText", () => {
  it("words each store in both languages", () => {
    expect(tokenStoreText({ kind: "keychain" })).toBe("the OS keychain");
    expect(tokenStoreText({ kind: "file", path: "/home/a/tokens.toml" })).toContain("/home/a/tokens.toml");
    setLocale("zh-CN");
    expect(tokenStoreText({ kind: "memory" })).toMatch(/[\u4e00-\u9fff]/);
    setLocale("en");
  });
});
