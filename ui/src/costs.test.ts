import { afterEach, describe, expect, it } from "vitest";
import type { CatalogRow, PlanComparisonView, PlanKind, PlanRow, RecommendationView } from "./bindings";
import {
  catalogModels,
  catalogRegions,
  chartWidth,
  costForPeriod,
  demandRowCount,
  FAQ4,
  fileRole,
  formatCount,
  formatMoney,
  formatPct,
  gpus,
  lineRange,
  pickPool,
  planName,
  problemPlace,
  recommendationText,
  sampleDemandCsv,
} from "./costs";
import { catalogs, setLocale } from "./i18n";
import { skipReasonText } from "./reasons";

/** Every plan kind the catalog words (planName is typed over PlanKind, so none is missing). */
const WORDED_KINDS = Object.keys(catalogs.en)
  .filter((key) => key.startsWith("costs.plan."))
  .map((key) => key.slice("costs.plan.".length) as PlanKind);

afterEach(() => setLocale("en"));

describe("formatMoney", () => {
  it.each([
    [0, "¥0.00"],
    [5, "¥0.05"],
    [99, "¥0.99"],
    [100, "¥1.00"],
    [1250, "¥12.50"],
    [123456, "¥1,234.56"],
    [25_000_000, "¥250,000.00"],
    [12_000_000, "¥120,000.00"],
    [100_000_000_000, "¥1,000,000,000.00"],
    [-2_202_000, "−¥22,020.00"],
    [-1, "−¥0.01"],
  ])("%d fen -> %s", (fen, text) => {
    expect(formatMoney(fen, "CNY")).toBe(text);
  });

  it("writes the same digits in Chinese", () => {
    setLocale("zh-CN");
    expect(formatMoney(123456, "CNY")).toBe("¥1,234.56");
  });

  it("names a currency it has no symbol for, and shows a dash for no amount", () => {
    expect(formatMoney(123456, "usd")).toBe("USD 1,234.56");
    expect(formatMoney(null)).toBe("—");
    expect(formatMoney(Number.NaN)).toBe("—");
  });

  it("never shows float noise", () => {
    // 0.1 + 0.2 yuan in fen is exact: no 0.30000000000000004 anywhere.
    expect(formatMoney(10 + 20)).toBe("¥0.30");
    expect(formatMoney(9_007_199_254_740_991)).toBe("¥90,071,992,547,409.91");
  });
});

describe("formatCount and formatPct", () => {
  it("groups thousands", () => {
    expect(formatCount(0)).toBe("0");
    expect(formatCount(999)).toBe("999");
    expect(formatCount(12900)).toBe("12,900");
    expect(formatCount(1234567)).toBe("1,234,567");
    expect(formatCount(-36500)).toBe("−36,500");
  });

  it("drops a zero decimal and keeps one otherwise", () => {
    expect(formatPct(52)).toBe("52%");
    expect(formatPct(52.0)).toBe("52%");
    expect(formatPct(47.18)).toBe("47.2%");
    expect(formatPct(35.5)).toBe("35.5%");
    expect(formatPct(0)).toBe("0%");
    expect(formatPct(-8.81)).toBe("−8.8%");
    expect(formatPct(Number.POSITIVE_INFINITY)).toBe("—");
  });

  it("counts GPUs in both languages", () => {
    expect(gpus(1)).toBe("1 GPU");
    expect(gpus(10)).toBe("10 GPUs");
    setLocale("zh-CN");
    expect(gpus(10)).toBe("10 块 GPU");
  });
});

describe("planName", () => {
  it("has a distinct name for every plan kind in both languages", () => {
    for (const locale of ["en", "zh-CN"] as const) {
      setLocale(locale);
      const names = WORDED_KINDS.map(planName);
      expect(names.length).toBeGreaterThanOrEqual(8);
      expect(new Set(names).size).toBe(WORDED_KINDS.length);
      for (const [i, name] of names.entries()) expect(name, WORDED_KINDS[i]).not.toBe(WORDED_KINDS[i]);
    }
  });

  it("translates", () => {
    expect(planName("base_hourly")).toBe("Base + hourly overlay");
    expect(planName("all_subscribed")).toBe("All subscribed at the peak (monthly)");
    setLocale("zh-CN");
    expect(planName("base_hourly")).toBe("包月基础量 + 按小时弹性");
  });
});

describe("sampleDemandCsv", () => {
  const csv = sampleDemandCsv();
  const rows = csv
    .trim()
    .split("\n")
    .filter((line) => !line.startsWith("#"));

  it("is a planning CSV of 730 hours", () => {
    expect(rows[0]).toBe("hour,demand");
    expect(rows.length).toBe(731);
    expect(rows[1]).toBe("0,10");
    expect(rows[730]).toBe("729,10");
    expect(demandRowCount(csv)).toBe(730);
    expect(csv.endsWith("\n")).toBe(true);
  });

  it("is the seed's FAQ 4: 10 GPUs all month, 50 from 19:00 to 24:00 on 28 days", () => {
    const demand = rows.slice(1).map((line) => Number(line.split(",")[1]));
    const hoursAt = (n: number) => demand.filter((d) => d === n).length;
    expect(hoursAt(50)).toBe(28 * 5);
    expect(hoursAt(10)).toBe(730 - 140);
    expect(demand[18]).toBe(10);
    expect(demand[19]).toBe(50);
    expect(demand[23]).toBe(50);
    expect(demand[24]).toBe(10);
    // Day 29 (hours 672..695) has no festival evening.
    expect(demand[28 * 24 + 20]).toBe(10);
    expect(demand[27 * 24 + 20]).toBe(50);
    // GPU-hours of work: the CLI's "12900 GPU-hours" for FAQ 4.
    expect(demand.reduce((a, b) => a + b, 0)).toBe(12900);
  });

  it("says what it is in the operator's language", () => {
    setLocale("zh-CN");
    const zh = sampleDemandCsv();
    expect(zh.split("\n")[0]).toBe("# 示例需求：始终需要 10 块 GPU，前 28 天每天 19:00 至 24:00 需要 50 块（共 730 小时）");
    expect(zh.split("\n").slice(1)).toEqual(csv.split("\n").slice(1));
  });

  it("follows the shape it is given", () => {
    const small = sampleDemandCsv({ ...FAQ4, hours: 48, base: 1, peak: 3, fromHour: 0, toHour: 2, days: 1 });
    expect(small.split("\n").slice(1, 6)).toEqual(["hour,demand", "0,3", "1,3", "2,1", "3,1"]);
    expect(small.split("\n")[0]).toBe("# Sample demand: 1 GPUs all along, 3 from 0:00 to 2:00 on the first 1 days (48 hours)");
    expect(demandRowCount(small)).toBe(48);
  });
});

describe("demandRowCount", () => {
  it("skips the header, comments and blank lines", () => {
    expect(demandRowCount("")).toBe(0);
    expect(demandRowCount("hour,demand\n")).toBe(0);
    expect(demandRowCount("# note\n\nhour,demand\r\n0,1\r\n\r\n# mid\n1,2\n")).toBe(2);
  });
});

function plan(kind: PlanKind, base: number, total: number, extra: Partial<PlanRow> = {}): PlanRow {
  return {
    kind,
    base_gpus: base,
    base_fen: base * 500_000,
    overlay_fen: total - base * 500_000,
    total_fen: total,
    saving_fen: 25_000_000 - total,
    saving_pct: Math.round(((25_000_000 - total) / 25_000_000) * 10000) / 100,
    term: "month",
    paid_gpu_hours: 0,
    paid_by_unit: { subscribed: 0, hour: 0, day: 0, week: 0, spot: 0, reserved: 0 },
    idle_paid_gpu_hours: 0,
    recommended: false,
    ...extra,
  };
}

/** A day overlay beating the hourly one. */
const DAY_OVERLAY = { overlay: "day", base_gpus: 8, cost_fen: 11_000_000, saving_vs_hourly_fen: 1_000_000 } as const;

/** FAQ 4 as the engine prices it for A100 in cn-north (the CLI's figures). */
function faq4(rec: Partial<RecommendationView> = {}, plans?: PlanRow[]): PlanComparisonView {
  return {
    model: "A100",
    region: "cn-north",
    currency: "CNY",
    hours: 730,
    first_hour: 0,
    peak_gpus: 50,
    used_gpu_hours: 12900,
    term: "month",
    subscription_per_gpu_fen: 500_000,
    hour_fen: 1_250,
    plans: plans ?? [
      plan("all_subscribed", 50, 25_000_000),
      plan("all_hourly", 0, 16_125_000),
      plan("all_on_demand_best_unit", 0, 13_205_000),
      plan("base_hourly", 10, 12_000_000, { recommended: true }),
      plan("base_daily", 50, 25_000_000),
      plan("base_weekly", 50, 25_000_000),
      plan("base_reserved", 10, 27_202_000),
    ],
    skipped: [{ kind: "base_spot", reason: { kind: "not_interruptible" } }],
    recommendation: {
      kind: "base_hourly",
      base_gpus: 10,
      cost_fen: 12_000_000,
      saving_fen: 13_000_000,
      saving_pct: 52,
      hourly_base_gpus: 10,
      hourly_cost_fen: 12_000_000,
      break_even_hours: 401,
      hours_at_base: 730,
      hours_above_base: 140,
      cheaper_overlay: null,
      ...rec,
    },
    chart_svg: "<svg/>",
  };
}

describe("recommendationText", () => {
  it("says FAQ 4's answer in words", () => {
    const words = recommendationText(faq4());
    expect(words.headline).toBe(
      "Subscribe 10 GPUs monthly and rent the rest by the hour: ¥120,000.00 a month, 52% less than subscribing the peak (50 GPUs).",
    );
    expect(words.details).toEqual([
      "Break-even: a GPU is worth subscribing when the demand needs it in at least 401 of the 730 hours; needed for fewer, it costs less by the hour.",
    ]);
  });

  it("says it in Chinese", () => {
    setLocale("zh-CN");
    const words = recommendationText(faq4());
    expect(words.headline).toBe("包月订阅 10 块 GPU，其余按小时租用：每月 ¥120,000.00，比按峰值（50 块 GPU）全部包月省 52%。");
    expect(words.details[0]).toContain("401");
  });

  it("mentions a cheaper day overlay with its base and cost", () => {
    const plans = [
      plan("all_subscribed", 50, 25_000_000),
      plan("base_hourly", 10, 12_000_000),
      plan("base_daily", 8, 11_000_000, { recommended: true }),
    ];
    const asBest = recommendationText(
      faq4({ kind: "base_daily", base_gpus: 8, cost_fen: 11_000_000, saving_fen: 14_000_000, saving_pct: 56, cheaper_overlay: DAY_OVERLAY }, plans),
    );
    expect(asBest.headline).toBe(
      "Subscribe 8 GPUs monthly and rent the rest by the day: ¥110,000.00 a month, 56% less than subscribing the peak (50 GPUs).",
    );
    expect(asBest.details).toEqual([
      "That beats renting the rest by the hour (subscribe 10 GPUs: ¥120,000.00).",
      "Break-even: a GPU is worth subscribing when the demand needs it in at least 401 of the 730 hours; needed for fewer, it costs less by the hour.",
    ]);

    // Spot is cheaper still, and the day overlay beats the hourly one: both are said.
    const spot = recommendationText(
      faq4(
        { kind: "base_spot", base_gpus: 0, cost_fen: 7_740_000, saving_fen: 17_260_000, saving_pct: 69.04, cheaper_overlay: DAY_OVERLAY },
        [...plans, plan("base_spot", 0, 7_740_000)],
      ),
    );
    expect(spot.headline).toBe("Subscribe nothing and run every GPU on spot: ¥77,400.00 a month, 69% less than subscribing the peak (50 GPUs).");
    expect(spot.details.slice(0, 2)).toEqual([
      "Renting the rest by the hour instead, the best base is 10 GPUs: ¥120,000.00 a month.",
      "Renting the rest by the day costs less than by the hour: subscribe 8 GPUs and pay ¥110,000.00 (56% less than subscribing the peak).",
    ]);
  });

  it("says when subscribing everything is cheapest, and the period of a longer series", () => {
    const words = recommendationText({
      ...faq4({ kind: "all_subscribed", base_gpus: 50, cost_fen: 50_000_000, saving_fen: 0, saving_pct: 0 }),
      hours: 1460,
    });
    expect(words.headline).toBe(
      "Subscribe all 50 GPUs monthly: ¥500,000.00 over 2 months. For this demand no mix with on-demand GPUs costs less.",
    );
    expect(words.details[words.details.length - 1]).toContain("of the 1,460 hours");
  });

  it("names the period of a series that is not whole months", () => {
    expect(costForPeriod(100, "CNY", 730)).toBe("¥1.00 a month");
    expect(costForPeriod(100, "CNY", 2190)).toBe("¥1.00 over 3 months");
    expect(costForPeriod(100, "CNY", 100)).toBe("¥1.00 over these 100 hours");
    setLocale("zh-CN");
    expect(costForPeriod(100, "CNY", 100)).toBe("这 100 小时共 ¥1.00");
  });
});

describe("skipReasonText", () => {
  it("words the engine's reasons in both languages", () => {
    expect(skipReasonText({ kind: "not_interruptible" })).toContain("not marked interruptible");
    const missing = { kind: "not_offered", model: "Ascend 910B", region: "cn-east", field: "reserved_hour" } as const;
    expect(skipReasonText(missing)).toContain("Ascend 910B in cn-east has no reserved_hour price");
    setLocale("zh-CN");
    expect(skipReasonText(missing)).toContain("cn-east 区域的 Ascend 910B 没有 reserved_hour 价格");
  });
});

describe("catalog helpers", () => {
  const row = (model: string, region: string): CatalogRow => ({
    model,
    region,
    hour_fen: 1250,
    day_fen: null,
    week_fen: null,
    month_fen: 500_000,
    year_fen: null,
    spot_hour_fen: null,
    reserved_hour_fen: null,
  });
  const rows = [row("H800", "cn-north"), row("H800", "cn-east"), row("A100", "cn-north"), row("A100", "cn-south"), row("V100", "cn-east")];

  it("lists models and each model's regions in catalog order", () => {
    expect(catalogModels(rows)).toEqual(["H800", "A100", "V100"]);
    expect(catalogRegions(rows, "A100")).toEqual(["cn-north", "cn-south"]);
    expect(catalogRegions(rows, "nope")).toEqual([]);
  });

  it("keeps the wanted pool where it can", () => {
    expect(pickPool(rows, { model: "A100", region: "cn-south" })).toEqual({ model: "A100", region: "cn-south" });
    expect(pickPool(rows, { model: "V100", region: "cn-north" })).toEqual({ model: "V100", region: "cn-east" });
    expect(pickPool(rows, { model: "gone", region: "cn-east" })).toEqual({ model: "H800", region: "cn-east" });
    expect(pickPool(rows, { model: null, region: null })).toEqual({ model: "H800", region: "cn-north" });
    expect(pickPool([], { model: "A100", region: "cn-north" })).toBeNull();
  });

  it("says where a problem is", () => {
    expect(problemPlace({ entry: "[[price]] #2 (A100 in cn-north)", field: "hour", message: "x" })).toBe(
      "[[price]] #2 (A100 in cn-north) · hour",
    );
    expect(problemPlace({ entry: "[[price]] #3", field: null, message: "x" })).toBe("[[price]] #3");
    expect(problemPlace({ entry: null, field: "currency", message: "x" })).toBe("The file as a whole · currency");
    setLocale("zh-CN");
    expect(problemPlace({ entry: null, field: null, message: "x" })).toBe("整个文件");
  });
});

describe("reading files and errors", () => {
  it("routes a dropped file by its name, else by where it landed", () => {
    expect(fileRole("prices.toml", "demand")).toBe("catalog");
    expect(fileRole("PRICES.TOML", "demand")).toBe("catalog");
    expect(fileRole("faq4.csv", "catalog")).toBe("demand");
    expect(fileRole("demand.txt", "demand")).toBe("demand");
    expect(fileRole("prices", "catalog")).toBe("catalog");
  });

  it("selects a whole line, CR or not", () => {
    const text = "hour,demand\r\n0,10\n1,x\n";
    expect(lineRange(text, 1)).toEqual([0, 11]);
    expect(text.slice(...(lineRange(text, 2) ?? [0, 0]))).toBe("0,10");
    expect(text.slice(...(lineRange(text, 3) ?? [0, 0]))).toBe("1,x");
    expect(lineRange(text, 4)).toEqual([text.length, text.length]);
    expect(lineRange(text, 5)).toBeNull();
    expect(lineRange(text, 0)).toBeNull();
  });

  it("asks for a chart as wide as its space, within limits", () => {
    expect(chartWidth(900)).toBe(900);
    expect(chartWidth(0)).toBe(720);
    expect(chartWidth(-40)).toBe(720);
    expect(chartWidth(100)).toBe(320);
    expect(chartWidth(9000)).toBe(1600);
  });
});
