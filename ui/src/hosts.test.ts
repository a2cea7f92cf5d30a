import { describe, expect, it } from "vitest";
import {
  checkHostForm,
  errorKindKey,
  HOST_FIELDS,
  fieldOfKind,
  formatLabels,
  parseLabels,
  shortFingerprint,
  tokenToSend,
  type HostFormValues,
} from "./hosts";
import type { IpcErrorKind } from "./bindings";
import { catalogs, setLocale, type MessageKey } from "./i18n";
import { fieldOf } from "./ipc";
import { tokenStoreText } from "./reasons";

const FP = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89";

function values(extra: Partial<HostFormValues> = {}): HostFormValues {
  return { name: "gpu-01", url: "http://10.0.0.5:7070", region: "us-east-1", labels: "", fingerprint: "", ...extra };
}

describe("parseLabels", () => {
  it.each([
    ["", {}],
    ["   ", {}],
    ["team=ml", { team: "ml" }],
    [" team = ml , rack=7 ,", { team: "ml", rack: "7" }],
    ["empty=", { empty: "" }],
    ["expr=a=b", { expr: "a=b" }],
    [",,gpu=a100,,", { gpu: "a100" }],
  ])("%j", (text, expected) => {
    expect(parseLabels(text)).toEqual({ ok: true, labels: expected });
  });

  it("names the piece that is not a pair", () => {
    expect(parseLabels("team=ml, rack")).toEqual({ ok: false, problem: { key: "hosts.check.labelPair", params: { piece: "rack" } } });
  });

  it("refuses an empty key", () => {
    expect(parseLabels("=ml")).toEqual({ ok: false, problem: { key: "hosts.check.labelKeyEmpty", params: { piece: "=ml" } } });
  });

  it("refuses a key given twice", () => {
    expect(parseLabels("a=1, a=2")).toEqual({ ok: false, problem: { key: "hosts.check.labelDuplicate", params: { key: "a" } } });
  });

  it("mirrors the server's limits", () => {
    const many = Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(",");
    expect(parseLabels(many)).toMatchObject({ ok: false, problem: { key: "hosts.check.labelCount" } });
    expect(parseLabels(Array.from({ length: 32 }, (_, i) => `k${i}=v`).join(","))).toMatchObject({ ok: true });
    expect(parseLabels(`${"k".repeat(64)}=v`)).toMatchObject({ ok: false, problem: { key: "hosts.check.labelLength" } });
    expect(parseLabels(`k=${"v".repeat(256)}`)).toMatchObject({ ok: false, problem: { key: "hosts.check.labelLength" } });
    expect(parseLabels(`${"k".repeat(63)}=${"v".repeat(255)}`)).toMatchObject({ ok: true });
  });

  it("round-trips with formatLabels", () => {
    const labels = { team: "ml", gpu: "a100", expr: "a=b" };
    const text = formatLabels(labels);
    expect(text).toBe("expr=a=b, gpu=a100, team=ml");
    expect(parseLabels(text)).toEqual({ ok: true, labels });
  });
});

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

describe("checkHostForm", () => {
  it("accepts a good host and trims it", () => {
    expect(checkHostForm(values({ name: " gpu-01 ", url: " https://h:7070 ", labels: "team=ml", fingerprint: FP }))).toEqual({
      ok: true,
      input: { name: "gpu-01", url: "https://h:7070", region: "us-east-1", labels: { team: "ml" }, fingerprint: FP },
    });
    expect(checkHostForm(values())).toMatchObject({ ok: true, input: { fingerprint: null, labels: {} } });
  });

  it.each([
    [{ name: "" }, "name", "hosts.check.nameRequired"],
    [{ name: "gpu 01" }, "name", "hosts.check.namePattern"],
    [{ name: "gpu/01" }, "name", "hosts.check.namePattern"],
    [{ name: "主机" }, "name", "hosts.check.namePattern"],
    [{ name: "a".repeat(64) }, "name", "hosts.check.nameLength"],
    [{ url: "" }, "url", "hosts.check.urlRequired"],
    [{ url: "10.0.0.5:7070" }, "url", "hosts.check.urlScheme"],
    [{ url: "ftp://h" }, "url", "hosts.check.urlScheme"],
    [{ url: "HTTP://h" }, "url", "hosts.check.urlScheme"],
    [{ url: "https://" }, "url", "hosts.check.urlHost"],
    [{ region: "" }, "region", "hosts.check.regionRequired"],
    [{ region: "us east" }, "region", "hosts.check.regionSpaces"],
    [{ region: "r".repeat(64) }, "region", "hosts.check.regionLength"],
    [{ labels: "nope" }, "labels", "hosts.check.labelPair"],
    [{ fingerprint: "AB:CD" }, "fingerprint", "hosts.check.fingerprintFormat"],
    [{ fingerprint: FP }, "fingerprint", "hosts.check.fingerprintHttps"],
  ] as const)("%j -> %s %s", (extra, field, key) => {
    const result = checkHostForm(values(extra));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems[field]?.key).toBe(key);
    expect(Object.keys(result.problems)).toEqual([field]);
  });

  it("accepts every name character the server does", () => {
    expect(checkHostForm(values({ name: "Gpu_01.rack-7" })).ok).toBe(true);
    expect(checkHostForm(values({ name: "a".repeat(63) })).ok).toBe(true);
  });

  it("accepts a fingerprint without colons, in any case, over https", () => {
    const bare = FP.replace(/:/g, "").toLowerCase();
    expect(checkHostForm(values({ url: "https://h:7070", fingerprint: bare })).ok).toBe(true);
  });

  it("reports every bad field at once", () => {
    const result = checkHostForm({ name: "", url: "x", region: "", labels: "x", fingerprint: "x" });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(Object.keys(result.problems).sort()).toEqual(["fingerprint", "labels", "name", "region", "url"]);
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
