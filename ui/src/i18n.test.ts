import { afterEach, describe, expect, it } from "vitest";
import { catalogs, detectLocale, getLocale, interpolate, LOCALES, onLocaleChange, setLocale, t, tIn, type MessageKey } from "./i18n";

const placeholders = (s: string): string[] => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? "").sort();

describe("message catalog", () => {
  const en = catalogs.en;
  const zh = catalogs["zh-CN"];

  it("has no key that no source file names (a dead key is a translation nobody sees)", () => {
    // Every source file but the catalog and the tests, as text (Vite reads them at test
    // time), and the Rust that words the desktop notifications from the same catalog or
    // chooses the words (phrases) the UI renders: form checks, reasons, refusals.
    const files = import.meta.glob<string>(["./**/*.ts", "./**/*.tsx", "!./**/*.test.ts", "!./i18n.ts"], {
      query: "?raw",
      import: "default",
      eager: true,
    });
    const notifications = import.meta.glob<string>(["../../crates/*/src/**/*.rs", "../../src-tauri/src/**/*.rs"], {
      query: "?raw",
      import: "default",
      eager: true,
    });
    const sources = Object.values(files);
    expect(sources.length).toBeGreaterThan(20);
    expect(Object.keys(notifications)).toContain("../../crates/ebb-notify/src/lib.rs");
    expect(Object.keys(notifications)).toContain("../../crates/ebb-wire/src/words.rs");
    const all = [...sources, ...Object.values(notifications)].join("\n");
    const dead = Object.keys(en).filter((key) => !all.includes(`"${key}"`));
    expect(dead).toEqual([]);
  });

  it("has the same keys in every language", () => {
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
  });

  it("has a non-empty string for every key in every language", () => {
    for (const locale of LOCALES) {
      for (const [key, value] of Object.entries(catalogs[locale])) {
        expect(typeof value, `${locale} ${key}`).toBe("string");
        expect(value.trim(), `${locale} ${key}`).not.toBe("");
      }
    }
    expect(catalogs.en["common.listSeparator"]).toBe(", ");
    expect(catalogs["zh-CN"]["common.listSeparator"]).toBe("、");
  });

  it("uses the same {placeholders} in both languages", () => {
    for (const key of Object.keys(en) as MessageKey[]) {
      expect(placeholders(zh[key]), key).toEqual(placeholders(en[key]));
    }
  });

  it("really is Chinese in zh-CN for sentences", () => {
    // Everything but names, punctuation and the language list is translated.
    const sameOnPurpose = new Set<MessageKey>([
      "app.name",
      "common.empty",
      "common.listSeparator",
      "reason.notesSeparator",
      // Slurm, who made a change, is a name in every language.
      "activity.actor.slurm",
      "fleet.chartCaption",
      "settings.language.en",
      "settings.language.zh-CN",
    ]);
    // A notification's frame around words filled in: Chinese by its punctuation alone.
    const punctuationOnly = new Set<MessageKey>(["notify.because.reason", "notify.scaled.body"]);
    for (const key of Object.keys(en) as MessageKey[]) {
      if (sameOnPurpose.has(key)) continue;
      expect(zh[key], key).not.toBe(en[key]);
      const chinese = punctuationOnly.has(key) ? /[\u3000-\u303f\uff00-\uffef]/ : /[\u4e00-\u9fff]/;
      expect(chinese.test(zh[key]), key).toBe(true);
    }
  });
});

describe("detectLocale", () => {
  it.each([
    [["zh-CN"], "zh-CN"],
    [["zh"], "zh-CN"],
    [["zh-TW", "en-US"], "zh-CN"],
    [["zh-Hans-SG"], "zh-CN"],
    [["ZH_cn"], "zh-CN"],
    [["en-US", "zh-CN"], "en"],
    [["en-GB"], "en"],
    [["fr-FR", "zh-CN"], "zh-CN"],
    [["fr-FR", "de"], "en"],
    [["zha"], "en"],
    [[], "en"],
  ] as const)("%j -> %s", (languages, expected) => {
    expect(detectLocale(languages)).toBe(expected);
  });
});

describe("t and interpolate", () => {
  afterEach(() => setLocale("en"));

  it("fills {name} placeholders", () => {
    expect(interpolate("Could not draw {host}: {message}", { host: "h1", message: "boom" })).toBe("Could not draw h1: boom");
    expect(interpolate("{a}{a}", { a: 1 })).toBe("11");
    expect(interpolate("tick {tick}", { tick: 0 })).toBe("tick 0");
  });

  it("leaves unknown placeholders alone and needs no params", () => {
    expect(interpolate("{missing} stays", {})).toBe("{missing} stays");
    expect(interpolate("no params {x}")).toBe("no params {x}");
  });

  it("translates in the current locale", () => {
    setLocale("en");
    expect(t("fleet.chartError", { host: "gpu-a", message: "timeout" })).toBe("Could not draw the chart for gpu-a: timeout");
    setLocale("zh-CN");
    expect(getLocale()).toBe("zh-CN");
    expect(t("fleet.chartError", { host: "gpu-a", message: "超时" })).toBe("无法绘制 gpu-a 的图表：超时");
    expect(tIn("en", "nav.fleet")).toBe("Fleet");
  });

  it("tells subscribers when the language changes, once per change", () => {
    const seen: string[] = [];
    const off = onLocaleChange((l) => seen.push(l));
    setLocale("zh-CN");
    setLocale("zh-CN");
    setLocale("en");
    off();
    setLocale("zh-CN");
    expect(seen).toEqual(["zh-CN", "en"]);
  });
});
