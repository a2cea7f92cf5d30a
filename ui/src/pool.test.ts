import { afterEach, describe, expect, it } from "vitest";
import type { ModelOffer, ReleasedLease, ScalePreview } from "./bindings";
import { setLocale } from "./i18n";
import {
  actorText,
  confirmReasonText,
  costTone,
  defaultModel,
  formIsDirty,
  modelChoices,
  modelWhereText,
  formatGpuHours,
  formatDateTime,
  formatWhen,
  freeText,
  hostProgressText,
  hostResultText,
  indexesText,
  sortLeases,
  keepSelection,
  LatestOnly,
  outcomeText,
  outcomeTone,
  overlayText,
  parseCount,
  parseYuan,
  phaseText,
  placementText,
  planWords,
  POOL_FIELDS,
  regionChoices,
  releaseText,
  rentText,
  scaleMarks,
  signedMoney,
  signedPerHour,
  termText,
  yuanInput,
  type PoolFormValues,
  releasedLeaseWords,
  releaseWarnings,
} from "./pool";
import { fieldOf } from "./ipc";
import { releaseWarningText } from "./reasons";

afterEach(() => setLocale("en"));

function preview(over: Partial<ScalePreview> = {}): ScalePreview {
  return {
    pool: "inference",
    from: 0,
    to: 0,
    per_hour_before_fen: 0,
    per_hour_after_fen: 0,
    per_month_before_fen: 0,
    per_month_after_fen: 0,
    delta_per_hour_fen: 0,
    delta_per_month_fen: 0,
    free_now: 0,
    free_by_host: [],
    rent: [],
    release: [],
    held_to_unit_end: 0,
    short: 0,
    needs_confirmation: false,
    confirmation_reason: null,
    cost_problem: null,
    released: [],
    release_warning: null,
    split: { base: 0, on_demand: 0, spot: 0 },
    spot_saving_per_hour_fen: null,
    ...over,
  };
}

describe("words for states", () => {
  it("names every phase, actor and outcome, and passes unknown ones through", () => {
    expect(phaseText("converged")).toBe("Holding what you asked for");
    expect(phaseText("scaling_out")).toBe("Renting GPUs");
    expect(phaseText("not_enforced")).toMatch(/^Not enforced/);
    expect(phaseText("warp")).toBe("warp");
    expect(actorText("failover")).toBe("Failover");
    expect(actorText("robot")).toBe("robot");
    expect(actorText("slurm")).toBe("Slurm");
    expect(outcomeText("in_progress")).toBe("In progress");
    expect(outcomeText("partial")).toMatch(/^Partial/);
    setLocale("zh-CN");
    expect(phaseText("scaling_in")).toBe("正在释放 GPU");
    expect(outcomeText("done")).toBe("已完成");
  });
});

describe("signed money", () => {
  it.each([
    [2500, "+¥25.00"],
    [-500, "−¥5.00"],
    [0, "¥0.00"],
    [null, "—"],
  ] as const)("%s -> %s", (fen, text) => {
    expect(signedMoney(fen)).toBe(text);
  });

  it("writes the period in the current language", () => {
    expect(signedPerHour(2500)).toBe("+¥25.00/h");
    setLocale("zh-CN");
    expect(signedPerHour(-2500)).toBe("−¥25.00/小时");
  });
});

describe("the plan in words", () => {
  it("rents over several hosts, with each host's share", () => {
    expect(
      rentText([
        { host: "cn-east-001", region: "cn-east", count: 4 },
        { host: "cn-south-002", region: "cn-south", count: 2 },
      ]),
    ).toBe("Rent 6: 4 on cn-east-001, 2 on cn-south-002");
  });

  it("rents on one host without a list, and skips empty moves", () => {
    expect(
      rentText([
        { host: "cn-east-001", region: "cn-east", count: 2 },
        { host: "cn-south-002", region: "cn-south", count: 0 },
      ]),
    ).toBe("Rent 2 on cn-east-001");
    expect(rentText([])).toBeNull();
  });

  it("releases from one host or several", () => {
    expect(releaseText([{ host: "cn-east-001", region: "cn-east", count: 3 }])).toBe("Release 3 from cn-east-001");
    expect(
      releaseText([
        { host: "a", region: "r", count: 2 },
        { host: "b", region: "r", count: 1 },
      ]),
    ).toBe("Release 3: 2 from a, 1 from b");
  });

  it("says no change, and adds the notes the preview carries", () => {
    expect(planWords(preview({ from: 2, to: 2 }))).toEqual({ headline: "No change: the pool already wants 2.", notes: [] });
    const words = planWords(
      preview({
        from: 4,
        to: 1,
        release: [{ host: "cn-east-001", region: "cn-east", count: 3 }],
        held_to_unit_end: 2,
        short: 1,
        cost_problem: { kind: "no_price", model: "H100", regions: ["cn-west"] },
      }),
    );
    expect(words.headline).toBe("Release 3 from cn-east-001");
    expect(words.notes).toEqual([
      "2 of them kept until their paid unit ends.",
      "1 more than are free now: the pool will wait for them.",
      "The cost is unknown: the catalog has no price for H100 in cn-west",
    ]);
  });

  it("says when GPUs are wanted and no host has them", () => {
    expect(planWords(preview({ from: 0, to: 3, short: 3 })).headline).toMatch(/^Rent 3: no host/);
  });

  it("is written in Chinese too", () => {
    setLocale("zh-CN");
    expect(rentText([{ host: "cn-east-001", region: "cn-east", count: 4 }])).toBe("在 cn-east-001 上租用 4 块");
    expect(
      rentText([
        { host: "a", region: "r", count: 1 },
        { host: "b", region: "r", count: 1 },
      ]),
    ).toBe("租用 2 块：a 上 1 块、b 上 1 块");
  });
});

describe("free GPUs", () => {
  it("lists the hosts with free GPUs", () => {
    expect(
      freeText(6, [
        { host: "cn-east-001", region: "cn-east", free: 4 },
        { host: "cn-south-002", region: "cn-south", free: 2 },
        { host: "cn-south-003", region: "cn-south", free: 0 },
      ]),
    ).toBe("Free now: 6 (4 on cn-east-001, 2 on cn-south-002)");
    expect(freeText(0, [])).toBe("No matching GPU is free now.");
  });
});

describe("host results", () => {
  it("says what each host did, with its error", () => {
    const refused = {
      kind: "refused_request",
      url: "http://h1:7070",
      status: 409,
      agent_kind: "not_enough_free",
      message: "only 0 GPUs are free",
    } as const;
    expect(hostResultText({ host: "h1", granted: 2, released: 0, failed: 1, error: refused })).toBe(
      "h1: 2 granted, 1 failed (http://h1:7070 refused (HTTP 409): not enough free GPUs)",
    );
    expect(hostResultText({ host: "h2", granted: 0, released: 0, failed: 0, error: null })).toBe("h2: nothing yet");
  });
});

describe("small formats", () => {
  it("joins GPU indexes", () => {
    expect(indexesText([0, 3])).toBe("0, 3");
    expect(indexesText([])).toBe("—");
  });

  it("writes times of today as a clock, older ones with their date", () => {
    const now = new Date(2026, 11, 5, 15, 0, 0).getTime();
    expect(formatWhen(new Date(2026, 11, 5, 9, 4, 7).getTime(), now)).toBe("09:04:07");
    expect(formatWhen(new Date(2026, 11, 1, 23, 59, 0).getTime(), now)).toBe("2026-12-01 23:59");
    expect(formatWhen(null, now)).toBe("—");
    expect(formatDateTime(new Date(2026, 11, 5, 9, 4, 7).getTime())).toBe("2026-12-05 09:04:07");
    expect(formatDateTime(null)).toBe("—");
  });

  it("rounds GPU-hours", () => {
    expect(formatGpuHours(3.25)).toBe("3.3");
    expect(formatGpuHours(0)).toBe("0.0");
    expect(formatGpuHours(1234.4)).toBe("1,234");
  });

  it("reads a count into the pool's range", () => {
    expect(parseCount("4", 0, 8)).toBe(4);
    expect(parseCount(" 12 ", 0, 8)).toBe(8);
    expect(parseCount("0", 2, 8)).toBe(2);
    expect(parseCount("", 0, 8)).toBeNull();
    expect(parseCount("2.5", 0, 8)).toBeNull();
    expect(parseCount("-1", 0, 8)).toBeNull();
  });

  it("reads yuan into fen and back", () => {
    expect(parseYuan("500")).toBe(50_000);
    expect(parseYuan("¥12.5")).toBe(1250);
    expect(parseYuan("1,000.05")).toBe(100_005);
    expect(parseYuan("12.345")).toBeNull();
    expect(parseYuan("-1")).toBeNull();
    expect(parseYuan("")).toBeNull();
    expect(yuanInput(50_000)).toBe("500");
    expect(yuanInput(1250)).toBe("12.50");
  });
});

describe("the pool form's fields", () => {
  it("finds the field a server error names", () => {
    const invalid = (field: string | null) => ({ kind: "invalid_input" as const, field, line: null, message: "m", problem: null });
    expect(fieldOf(invalid("regions"), POOL_FIELDS)).toBe("regions");
    expect(fieldOf(invalid("base_gpus"), POOL_FIELDS)).toBe("base_gpus");
    expect(fieldOf(invalid("to"), POOL_FIELDS)).toBeNull();
    expect(fieldOf(invalid(null), POOL_FIELDS)).toBeNull();
  });
});

describe("LatestOnly", () => {
  function deferred<T>() {
    let resolve!: (v: T) => void;
    const promise = new Promise<T>((r) => (resolve = r));
    return { promise, resolve };
  }

  it("keeps one request in flight and hands on only the latest answer", async () => {
    const asked: number[] = [];
    const pending = new Map<number, { resolve: (v: string) => void }>();
    const shown: string[] = [];
    const gate = new LatestOnly<number, string>(
      (v) => {
        asked.push(v);
        const d = deferred<string>();
        pending.set(v, d);
        return d.promise;
      },
      (v, r) => shown.push(`${v}:${r}`),
    );
    const first = gate.ask(1);
    void gate.ask(2);
    void gate.ask(3);
    expect(asked).toEqual([1]);
    pending.get(1)?.resolve("one");
    await Promise.resolve();
    await Promise.resolve();
    // 1's answer is stale (3 was asked since); 2 was never sent; 3 is in flight.
    expect(shown).toEqual([]);
    expect(asked).toEqual([1, 3]);
    pending.get(3)?.resolve("three");
    await first;
    expect(shown).toEqual(["3:three"]);
    expect(gate.busy).toBe(false);
  });

  it("drops a late answer after reset or close", async () => {
    const shown: number[] = [];
    const d = deferred<number>();
    const gate = new LatestOnly<number, number>(
      () => d.promise,
      (_, r) => shown.push(r),
    );
    const run = gate.ask(5);
    gate.reset();
    d.resolve(5);
    await run;
    expect(shown).toEqual([]);
    const e = deferred<number>();
    const gate2 = new LatestOnly<number, number>(
      () => e.promise,
      (_, r) => shown.push(r),
    );
    const run2 = gate2.ask(6);
    gate2.close();
    e.resolve(6);
    await run2;
    expect(shown).toEqual([]);
  });
});

describe("the view's small rules", () => {
  it("marks every count of a small range, and the ends and middle of a large one", () => {
    expect(scaleMarks(0, 8)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(scaleMarks(2, 2)).toEqual([2]);
    expect(scaleMarks(0, 16)).toHaveLength(17);
    expect(scaleMarks(0, 100)).toEqual([0, 50, 100]);
    expect(scaleMarks(5, 3)).toEqual([5]);
  });

  it("tones a cost change by its sign, and none when unknown", () => {
    expect(costTone(250)).toBe("dearer");
    expect(costTone(-1)).toBe("cheaper");
    expect(costTone(0)).toBe("");
    expect(costTone(null)).toBe("");
  });

  it("tones an outcome: partial warns, superseded informs, the rest is fine", () => {
    expect(outcomeTone("partial")).toBe("alert-warn");
    expect(outcomeTone("superseded")).toBe("alert-info");
    expect(outcomeTone("done")).toBe("alert-ok");
    expect(outcomeTone("in_progress")).toBe("alert-ok");
  });

  it("words a host's progress: pending first, then releasing, else settled", () => {
    expect(hostProgressText({ leased: 2, pending: 1, releasing: 1 })).toBe("2 of 3 granted");
    expect(hostProgressText({ leased: 2, pending: 0, releasing: 1 })).toBe("releasing 1");
    expect(hostProgressText({ leased: 2, pending: 0, releasing: 0 })).toBe("settled");
  });

  it("keeps the chosen pool while it exists, else shows the first", () => {
    expect(keepSelection(["a", "b"], "b")).toBe("b");
    expect(keepSelection(["a", "b"], "gone")).toBe("a");
    expect(keepSelection(["a", "b"], null)).toBe("a");
    expect(keepSelection([], "a")).toBeNull();
  });

  it("offers the hosts' regions, then the pool's regions no host is in any more", () => {
    const offered = [{ region: "cn-east", hosts: 2, gpu_models: ["A100"] }];
    expect(regionChoices(offered, ["cn-east", "cn-west", "cn-west"])).toEqual([
      { region: "cn-east", hosts: 2, gpu_models: ["A100"] },
      { region: "cn-west", hosts: 0, gpu_models: [] },
    ]);
    expect(regionChoices([], [])).toEqual([]);
  });

  it("offers only the regions whose hosts have the chosen model, and the pool's own", () => {
    const offered = [
      { region: "cn-east", hosts: 2, gpu_models: ["A100"] },
      { region: "cn-north", hosts: 1, gpu_models: ["H800"] },
    ];
    const a100 = { model: "A100", priced: true, reported: ["NVIDIA A100-SXM4-80GB"], hosts: 2, regions: ["cn-east"] };
    expect(regionChoices(offered, [], a100).map((r) => r.region)).toEqual(["cn-east"]);
    expect(regionChoices(offered, ["cn-north"], a100).map((r) => r.region)).toEqual(["cn-east", "cn-north"]);
    expect(regionChoices(offered, [], null).map((r) => r.region)).toEqual(["cn-east", "cn-north"]);
  });

  it("words why a change asks first, or nothing without a reason", () => {
    expect(confirmReasonText({ confirmation_reason: { kind: "gpus", change: 3, limit: 2 } })).toContain("more than 2");
    expect(confirmReasonText({ confirmation_reason: null })).toBe("");
  });

  it("words the terms, overlays and placements in the current language", () => {
    expect(termText("year")).toBe("yearly");
    expect(overlayText("spot")).toBe("spot (interruptible)");
    expect(placementText("pack")).toBe("pack (fill the hosts in use first)");
    setLocale("zh-CN");
    expect(termText("month")).toBe("按月");
  });
});

describe("the model choices", () => {
  const offer = (model: string, priced: boolean, reported: string[], hosts: number, regions: string[]): ModelOffer => ({
    model,
    priced,
    reported,
    hosts,
    regions,
  });
  const offers: ModelOffer[] = [
    offer("A100", true, ["NVIDIA A100-SXM4-80GB"], 3, ["cn-east", "cn-north"]),
    offer("H800", true, ["H800"], 1, ["cn-east"]),
    offer("Ascend 910B", false, ["Ascend 910B"], 1, ["cn-south"]),
    offer("V100", true, [], 0, []),
  ];

  it("names the catalog's model with what the hosts report, and where", () => {
    const choices = modelChoices(offers, "");
    expect(choices.map((c) => c.value)).toEqual(["A100", "H800", "Ascend 910B", "V100"]);
    expect(choices[0]?.label).toBe("A100 — NVIDIA A100-SXM4-80GB");
    // A host that reports the catalog's own name needs no "—".
    expect(choices[1]?.label).toBe("H800");
    expect(modelWhereText(offers, "A100")).toBe("Reported by 3 hosts: cn-east, cn-north");
    expect(modelWhereText(offers, "V100")).toBeNull();
    expect(choices[2]).toEqual({ value: "Ascend 910B", label: "Ascend 910B — not in the price catalog", disabled: true });
    expect(choices[3]?.label).toBe("V100 — no host reports it yet");
    setLocale("zh-CN");
    expect(modelChoices(offers, "")[0]?.label).toBe("A100 — 主机报告为 NVIDIA A100-SXM4-80GB");
    expect(modelWhereText(offers, "A100")).toBe("3 台主机报告此型号，位于 cn-east、cn-north");
  });

  it("keeps a pool's own model that the offers lack, and starts a new pool on a reported one", () => {
    expect(modelChoices(offers, "B200")[0]).toEqual({ value: "B200", label: "B200 (this pool's)", disabled: false });
    expect(modelChoices(offers, "A100")).toHaveLength(4);
    expect(defaultModel(offers)).toBe("A100");
    expect(defaultModel([offers[2]!, offers[3]!])).toBe("");
  });

  it("knows a changed form from one as it opened", () => {
    const opened: PoolFormValues = {
      name: "web",
      model: "A100",
      regions: ["cn-east", "cn-north"],
      min: "0",
      max: "8",
      base_gpus: "0",
      term: "month",
      overlay: "hour",
      placement: "pack",
      interruptible: false,
      release_at_unit_end: false,
    };
    expect(formIsDirty({ ...opened, regions: ["cn-north", "cn-east"] }, opened)).toBe(false);
    expect(formIsDirty({ ...opened, max: "9" }, opened)).toBe(true);
    expect(formIsDirty({ ...opened, regions: ["cn-east"] }, opened)).toBe(true);
    expect(formIsDirty({ ...opened, interruptible: true }, opened)).toBe(true);
  });
});

describe("the GPUs a scale-in releases", () => {
  const now = new Date(2026, 11, 4, 13, 20, 0).getTime();
  const at14 = new Date(2026, 11, 4, 14, 0, 0).getTime();
  function lease(over: Partial<ReleasedLease> = {}): ReleasedLease {
    return {
      lease_id: "l-1",
      host: "cn-east-001",
      region: "cn-east",
      gpu_indexes: [3],
      util_pct: 72.4,
      busy: true,
      paid_until_ms: at14,
      kept_to_unit_end: false,
      safe: false,
      chosen: false,
      ...over,
    };
  }

  it("names the host, GPU index and lease, how busy, and what is paid", () => {
    expect(releasedLeaseWords(lease(), now)).toEqual({
      gpu: "cn-east-001 · GPU 3",
      lease: "lease l-1",
      util: "busy 72%",
      paid: "released now; paid until 14:00:00",
      marks: [],
      tone: "busy",
    });
    expect(releasedLeaseWords(lease({ chosen: true, safe: true }), now).marks).toEqual([
      "your choice",
      "saved its state: safe to release",
    ]);
    const idle = releasedLeaseWords(lease({ util_pct: 1, busy: false, kept_to_unit_end: true }), now);
    expect(idle.util).toBe("idle 1%");
    expect(idle.paid).toBe("kept until 14:00:00: already paid");
    expect(releasedLeaseWords(lease({ util_pct: null, busy: false, paid_until_ms: now + 30_000 }), now)).toMatchObject({
      util: "utilization unknown",
      paid: "released now, at its paid unit's end",
      tone: "",
    });
  });

  it("warns of busy GPUs with the grace, and of the paid unit's saving", () => {
    const released = [lease(), lease({ lease_id: "l-2", util_pct: 88.6, paid_until_ms: at14 + 3_600_000 })];
    const warning = { kind: "busy_gpus" as const, busy: 2, of: 3, min_util_pct: 55, max_util_pct: 89, grace_s: 30 };
    expect(releaseWarningText({ ...warning, busy: 1, of: 1, max_util_pct: 55 })).toBe(
      "This GPU runs a job at 55%: it gets SIGTERM with a 30 s grace",
    );
    expect(releaseWarningText({ ...warning, busy: 3 })).toBe(
      "All 3 of these GPUs run jobs at 55–89%: they get SIGTERM with a 30 s grace",
    );
    expect(releaseWarnings({ released, release_warning: warning }, now)).toEqual([
      "2 of these 3 GPUs run jobs at 55–89%: they get SIGTERM with a 30 s grace",
      "Keep until 14:00:00: already paid. Released now, these GPUs save nothing on the unit under way.",
    ]);
    // Nothing busy, and every unit ending within the minute (or kept): nothing to warn of.
    const quiet = [lease({ busy: false, util_pct: 0, paid_until_ms: now + 10_000 }), lease({ kept_to_unit_end: true })];
    expect(releaseWarnings({ released: quiet, release_warning: null }, now)).toEqual([]);
    setLocale("zh-CN");
    expect(releaseWarnings({ released: [], release_warning: { ...warning, min_util_pct: 60, max_util_pct: 60 } }, now)).toEqual([
      "其中 2 块 GPU（共 3 块）正在运行作业，利用率 60%：将收到 SIGTERM，宽限 30 秒",
    ]);
  });
});

describe("sortLeases", () => {
  it("orders leases by host, then lowest GPU index, whatever order they came in", () => {
    const lease = (host: string, gpu_indexes: number[], lease_id: string) => ({ host, gpu_indexes, lease_id });
    const sorted = sortLeases([
      lease("cn-east-001", [0], "c"),
      lease("cn-east-001", [2, 3], "a"),
      lease("cn-east-001", [3], "b"),
      lease("cn-east-001", [1], "d"),
      lease("cn-east-000", [5], "e"),
    ]);
    expect(sorted.map((l) => `${l.host}/${l.gpu_indexes.join("+")}`)).toEqual([
      "cn-east-000/5",
      "cn-east-001/0",
      "cn-east-001/1",
      "cn-east-001/2+3",
      "cn-east-001/3",
    ]);
  });
});
