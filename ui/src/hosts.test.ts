import { describe, expect, it } from "vitest";
import {
  asIpcError,
  checkHostForm,
  errorKindKey,
  fieldOfError,
  fieldOfKind,
  formatLabels,
  parseLabels,
  shortFingerprint,
  tokenStoreProblem,
  tokenToSend,
  type HostFormValues,
} from "./hosts";
import { catalogs, type MessageKey } from "./i18n";

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

describe("fieldOfError", () => {
  it("finds the field a registry error names", () => {
    expect(fieldOfError("url: `10.0.0.5` must start with http:// or https://")).toEqual({
      field: "url",
      detail: "`10.0.0.5` must start with http:// or https://",
    });
    expect(fieldOfError("name: a host named `a` is already registered")?.field).toBe("name");
    expect(fieldOfError("fingerprint: must be a SHA-256: 64 hex digits, colons optional")).toEqual({
      field: "fingerprint",
      detail: "must be a SHA-256: 64 hex digits, colons optional",
    });
  });

  it("ignores messages that name no form field", () => {
    expect(fieldOfError("host: no host named `x` is registered")).toBeNull();
    expect(fieldOfError("http://h refused the connection")).toBeNull();
    expect(fieldOfError("")).toBeNull();
  });
});

describe("error kinds", () => {
  const kinds = [
    "bad_url",
    "dns",
    "refused",
    "timeout",
    "tls",
    "connect",
    "unauthorized",
    "forbidden",
    "status",
    "decode",
    "incompatible",
    "invalid_input",
    "token_store",
    "not_found",
    "internal",
  ];

  it("has its own sentence, in both languages, for every kind the IPC sends", () => {
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

  it("has a general sentence for a kind it does not know", () => {
    expect(errorKindKey("something_new")).toBe("hosts.error.other");
  });

  it("points connection failures at the field to fix", () => {
    expect(fieldOfKind("refused")).toBe("url");
    expect(fieldOfKind("dns")).toBe("url");
    expect(fieldOfKind("tls")).toBe("fingerprint");
    expect(fieldOfKind("unauthorized")).toBe("token");
    expect(fieldOfKind("internal")).toBeNull();
  });

  it("recognizes an IpcError and nothing else", () => {
    expect(asIpcError({ kind: "dns", message: "m" })).toEqual({ kind: "dns", message: "m" });
    expect(asIpcError({ kind: "dns" })).toEqual({ kind: "dns", message: "" });
    expect(asIpcError("boom")).toBeNull();
    expect(asIpcError(new Error("boom"))).toBeNull();
    expect(asIpcError(null)).toBeNull();
  });
});

describe("tokenStoreProblem", () => {
  it("translates the stores the shell describes", () => {
    expect(tokenStoreProblem("the OS keychain")).toEqual({ key: "hosts.tokenStore.keychain" });
    expect(tokenStoreProblem("memory")).toEqual({ key: "hosts.tokenStore.memory" });
    expect(tokenStoreProblem("the file /home/a/.local/share/ebb/tokens.toml (readable only by you)")).toEqual({
      key: "hosts.tokenStore.file",
      params: { path: "/home/a/.local/share/ebb/tokens.toml" },
    });
  });
  it("leaves other words to be shown as they are", () => {
    expect(tokenStoreProblem("a vault somewhere")).toBeNull();
  });
});
