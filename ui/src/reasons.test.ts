import { afterEach, describe, expect, it } from "vitest";
import type {
  ConfirmationReason,
  Decision,
  HostProblem,
  LintProblem,
  NodeProblem,
  PoolNote,
  PriceProblem,
  SlurmStep,
  WordedChangeReason as ChangeReason,
} from "./bindings";
import { clampOf, reasonOf, worded } from "./fixtures/worded";
import { setLocale } from "./i18n";
import {
  agentRefusalText,
  changeReasonText,
  confirmationText,
  hostProblemText,
  lintProblemText,
  nodeProblemText,
  poolNoteText,
  poolNotesText,
  priceProblemText,
  rulesModeText,
} from "./reasons";

afterEach(() => setLocale("en"));

/** Every kind of a reason union, listed: a kind added in Rust is a type error here until a
 * fixture of it is worded and checked below. */
type EveryKind<T extends { kind: string }> = Readonly<Record<T["kind"], true>>;

function expectEveryKind<T extends { kind: string }>(items: readonly T[], kinds: EveryKind<T>): void {
  expect([...new Set(items.map((item) => item.kind))].sort()).toEqual(Object.keys(kinds).sort());
}

const url = "http://gpu-a:7070";
const problems: HostProblem[] = [
  { kind: "bad_url", url, reason: "x" },
  { kind: "dns", url },
  { kind: "refused", url },
  { kind: "timeout", url, timeout_ms: 2000 },
  { kind: "tls", url, reason: "x" },
  { kind: "connect", url, reason: "x" },
  { kind: "unauthorized", url },
  { kind: "forbidden", url },
  { kind: "status", url, status: 500 },
  { kind: "refused_request", url, status: 409, agent_kind: "not_enough_free", message: "only 0 free" },
  { kind: "decode", url, reason: "x" },
  { kind: "incompatible", url, found: 2, expected: 1 },
  { kind: "gpus_not_answering", gpus: 2 },
  { kind: "slow", latency_ms: 900 },
];
const changes: ChangeReason[] = [
  { kind: "created", model: "A100", regions: ["cn-east", "cn-south"], min: 0, max: 8 },
  { kind: "settings_changed", min: 1, max: 4, range_moved: true },
  { kind: "settings_changed", min: 1, max: 4, range_moved: false },
  { kind: "deleted" },
  { kind: "release_now" },
  { kind: "slider" },
  { kind: "cli" },
  { kind: "failover", host: "gpu-a", gpus: 2, grace_s: 30 },
  { kind: "host_back", host: "gpu-a", leases: 2 },
  { kind: "host_added", host: "gpu-a", region: "cn-east" },
  { kind: "host_removed", host: "gpu-a" },
  { kind: "host_forgotten", host: "gpu-a", leases: 3 },
  { kind: "confirm_limits_changed", above_gpus: 4, above_per_hour_fen: 10_000 },
  { kind: "budget_changed", budget_fen: 5_000_000 },
  { kind: "budget_changed", budget_fen: null },
  // Worded in Rust: as the shell sends them.
  ...worded.changes,
];
/** Teams, quotas and roles: names of two letters, so the zh-CN check sees only words. */
const accessChanges: ChangeReason[] = [
  { kind: "upkeep", rented: 1, released: 1 },
  { kind: "team_changed", team: "ml", spend_per_month_fen: 5_000_000 },
  { kind: "team_changed", team: "ml", spend_per_month_fen: null },
  { kind: "team_quota", team: "ml", model: "A100", gpus: 16 },
  { kind: "team_quota", team: "ml", model: "A100", gpus: null },
  { kind: "pool_team", pool: "ab", team: "ml" },
  { kind: "pool_team", pool: "ab", team: "" },
  { kind: "role_granted", user: "al", role: "operator" },
  { kind: "refused", action: "enable_rules" as const, needs: "admin" as const },
  { kind: "quota_clamp", team: "ml", model: "A100", quota_gpus: 6, asked: 8 },
  { kind: "spend_quota_clamp", team: "ml", per_month_fen: 5_000_000, asked: 8 },
];
const parkedUntil = new Date(2026, 0, 5, 10, 45).getTime();
const slurm = (step: SlurmStep, gpus = 4, nodes = "gpu[1-2]"): ChangeReason => ({ kind: "slurm", partition: "batch", nodes, gpus, step });
const slurmChanges: ChangeReason[] = [
  slurm({ step: "resumed" }),
  slurm({ step: "drained" }),
  slurm({ step: "undrained" }),
  slurm({ step: "released" }),
  slurm({ step: "parked", until_ms: parkedUntil }),
  slurm({ step: "requeued", jobs: ["1041", "1042"] }),
  slurm({ step: "cannot_serve", problem: { kind: "gpu_leased", host: "gpu-a", index: 1 } }, 2, "gpu3"),
  slurm({ step: "cancelled", jobs: ["1043"] }, 2, "gpu2"),
  slurm({ step: "returned", slurm_reason: "Duplicate jobid" }, 2, "gpu2"),
  slurm({ step: "replaced", slurm_reason: "Not responding" }, 2, "gpu3"),
  slurm({ step: "unheld", jobs: ["1041", "1042"] }, 0, ""),
];
const confirmations: ConfirmationReason[] = [
  { kind: "gpus", change: 3, limit: 2 },
  { kind: "cost_per_hour", delta_fen: 123_456, limit_fen: 10_000 },
];
const prices: PriceProblem[] = [
  { kind: "no_price", model: "A100", regions: ["cn-east", "cn-south"] },
  { kind: "not_offered", model: "A100", region: "cn-east", field: "spot_hour" },
  { kind: "no_region" },
  { kind: "too_large" },
];
const notes: PoolNote[] = [
  { kind: "not_enforced" },
  { kind: "short", gpus: 2, model: "A100", regions: ["cn-east"] },
  { kind: "host_failing", host: "gpu-a", problem: { kind: "refused", url } },
  { kind: "lost", gpus: 2 },
  { kind: "held_to_unit_end", gpus: 1 },
  { kind: "spot_paused", region: "cn-east", until_ms: new Date(2026, 0, 5, 14, 30).getTime() },
  { kind: "spot_not_taken", gpus: 2, why: "not_interruptible" },
  { kind: "spot_not_taken", gpus: 2, why: "paused" },
  { kind: "spot_not_taken", gpus: 1, why: "over_max_price" },
];

describe("structured reasons", () => {
  it("read in English as the Rust side writes them for logs and the CLI", () => {
    expect(changeReasonText(changes[7]!)).toBe(
      "gpu-a has not answered for 30 s: 2 GPUs there written off and replaced elsewhere",
    );
    expect(changeReasonText(changes[5]!)).toBe("slider in the Pool view");
    expect(changeReasonText(changes[changes.length - 1]!)).toMatch(
      /^gpu-a takes back 1 GPU at \d\d:\d\d \(its owner's reclaim notice\): a replacement is ordered now$/,
    );
    expect(changes.slice(-3, -1).map(changeReasonText)).toEqual([
      "spot A100 in cn-east taken back 3 times in 30 min: new GPUs there go on demand until it is quiet",
      "spot A100 in cn-east quiet for 20 min: new GPUs there may go on spot again",
    ]);
    expect(poolNoteText(notes[5]!)).toBe("spot paused in cn-east until 14:30: new GPUs there go on demand");
    expect(changes.slice(9, -3).map(changeReasonText)).toEqual([
      "host gpu-a added in cn-east",
      "host gpu-a removed",
      "host gpu-a forgotten while silent: its 3 written-off leases recorded as ended",
      "confirmation limits changed: ask above 4 GPUs or ¥100.00 per hour",
      "monthly budget set to ¥50,000.00",
      "monthly budget cleared",
      "3 GPUs on gpu-a, gpu-b ready: warmed up 5 s after the grant",
    ]);
    expect(hostProblemText(problems[10]!)).toBe("http://gpu-a:7070 answered, but it is not an Ebb agent (wrong port?): x");
    expect(confirmationText(confirmations[1]!)).toBe("moves the cost by ¥1,234.56 per hour (more than ¥100.00)");
    expect(hostProblemText(problems[3]!)).toBe("no answer from http://gpu-a:7070 within 2000 ms");
    expect(poolNotesText([notes[3]!, notes[4]!])).toBe(
      "2 GPUs on unreachable hosts written off and being replaced; 1 GPU kept until the paid unit ends",
    );
    expect(poolNotesText([])).toBeNull();
  });

  it("word an agent's refusal by its kind, and a newer agent's unknown kind by its own message", () => {
    expect(agentRefusalText("stale_term", "term 3 is below 4")).toBe("another console has since been elected to enforce the pools");
    expect(agentRefusalText("unknown", "over the host's quota")).toBe("over the host's quota");
    expect(hostProblemText({ ...problems[9]!, agent_kind: "unknown", message: "over quota" } as HostProblem)).toBe(
      "http://gpu-a:7070 refused (HTTP 409): over quota",
    );
    setLocale("zh-CN");
    expect(agentRefusalText("stale_term", "term 3 is below 4")).toBe("此后已选出另一个控制台来执行资源池");
    expect(agentRefusalText("not_enough_free", "only 0 free")).toBe("空闲 GPU 不足");
  });

  it("price problems name the model and the regions", () => {
    expect(priceProblemText(prices[0]!)).toBe("the catalog has no price for A100 in cn-east, cn-south");
    setLocale("zh-CN");
    expect(priceProblemText(prices[0]!)).toBe("价格目录中没有 A100 在 cn-east、cn-south 的价格");
  });

  it("have a fixture of every kind", () => {
    expectEveryKind(problems, {
      bad_url: true,
      dns: true,
      refused: true,
      timeout: true,
      tls: true,
      connect: true,
      unauthorized: true,
      forbidden: true,
      status: true,
      refused_request: true,
      decode: true,
      incompatible: true,
      gpus_not_answering: true,
      slow: true,
    });
    expectEveryKind(confirmations, { gpus: true, cost_per_hour: true });
    expectEveryKind(notes, { not_enforced: true, short: true, host_failing: true, lost: true, held_to_unit_end: true, spot_paused: true, spot_not_taken: true });
    expectEveryKind(prices, { no_price: true, not_offered: true, no_region: true, too_large: true });
  });

  it("have no English words left in zh-CN, numbers and names kept", () => {
    setLocale("zh-CN");
    const texts = [
      ...changes.map(changeReasonText),
      ...accessChanges.map(changeReasonText),
      ...problems.map(hostProblemText),
      ...confirmations.map(confirmationText),
      ...notes.map(poolNoteText),
      ...prices.map(priceProblemText),
    ];
    for (const text of texts) {
      expect(text, text).toMatch(/[\u4e00-\u9fff]/);
      // What may stay Latin: URLs, host and model names, region ids, HTTP, API, GPU, TLS, JSON, the CLI.
      const rest = text
        .replace(/https?:\/\/\S+?(?=[\s，：；（）]|$)/g, "")
        .replace(/\b(gpu-a|gpu-b|A100|cn-east|cn-south|spot_hour|HTTP|API|GPU|TLS|JSON|Ebb|ebb-agent|ebb pool scale|ebb daemon|v\d)\b/g, "");
      expect(rest, text).not.toMatch(/[A-Za-z]{3,}/);
    }
    expect(changeReasonText(changes[7]!)).toBe("gpu-a 已 30 秒无响应：其 2 块 GPU 已注销，并在别处补充");
    expect(poolNoteText(notes[5]!)).toBe("cn-east 的抢占式已暂停至 14:30：该区域的新 GPU 改为按需");
  });
});

describe("rules in words", () => {
  const decision: Decision = {
    at_ms: 0,
    current_gpus: 4,
    rules: [],
    recommended_gpus: 8,
    clamps: [clampOf("step_cap")],
    desired_gpus: 6,
    cost_delta_per_hour_fen: 2_400,
    reason: reasonOf("rule"),
  };
  const rulesChanges: ChangeReason[] = [
    { kind: "rules_saved", version: 2, mode: "shadow", added: ["out"], removed: [], changed: ["limits", "in"], warnings: 1 },
    { kind: "rules_mode", version: 2, mode: "enabled" },
    { kind: "rule_decision", decision, shadow: false },
    { kind: "rule_decision", decision: { ...decision, desired_gpus: 4, reason: reasonOf("steady") }, shadow: true },
    { kind: "budget_override", per_hour_fen: 50_000, cap_fen: 40_000 },
  ];
  const lint: LintProblem[] = [
    { kind: "flapping", other_rule: "in", at_gpus: 4, from_value: 80, after_value: 66.67, other_threshold: 70 },
    { kind: "cooldown_shorter_than_warmup", cooldown_minutes: 2, warmup_minutes: 5 },
    { kind: "bands_overlap", other_rule: "in", out_threshold: 60, in_threshold: 70 },
    { kind: "unreachable", metric: "gpu_util", comparison: "above", threshold: 120 },
    { kind: "schedule_fights_limits", bound: "exact", gpus: 12, min_gpus: 0, max_gpus: 8 },
    { kind: "over_budget", gpus: 8, budget_gpus: 4 },
    { kind: "set_outside_limits", gpus: 12, min_gpus: 0, max_gpus: 8 },
    { kind: "target_unreachable", peak_value: 30, needed_gpus: 12, max_gpus: 8 },
    { kind: "force_release_pays_again", unit_hours: 1 },
  ];

  it("read in English as the Rust side writes them", () => {
    expect(rulesChanges.map(changeReasonText)).toEqual([
      "rules saved as version 2 (shadow); added out; changed limits, in; 1 lint warning acknowledged",
      "rules version 2 enabled",
      "out-at-80 asked for 8, limited to 6: the step cap of 2",
      "shadow mode, nothing changed: no rule asks for a change",
      "past the budget cap on purpose: ¥500.00 per hour against a cap of ¥400.00",
    ]);
    expect(changeReasonText({ kind: "quota_clamp", team: "research", model: "A100", quota_gpus: 6, asked: 8 })).toBe(
      "asked for 8 GPUs, clamped by team research's quota of 6 A100 GPUs",
    );
    expect(changeReasonText({ kind: "refused", action: "enable_rules", needs: "admin" })).toBe("refused: to enable rules needs the admin role");
    expect(lintProblemText(lint[1]!)).toBe(
      "the cooldown (2 min) is shorter than the warmup (5 min): it fires again before its GPUs are ready",
    );
    expect(lintProblemText(lint[4]!)).toBe("exactly 12 is outside the pool's min 0 and max 8: the limits win");
    expect(rulesModeText("shadow")).toBe("shadow");
  });

  it("have a fixture of every change reason and every rule word", () => {
    const draining: ChangeReason = { kind: "host_draining", host: "gpu-a", gpus: 2 };
    const note: ChangeReason = { kind: "note", text: "old words" };
    expectEveryKind([...changes, ...accessChanges, ...rulesChanges, ...slurmChanges, draining, note], {
      created: true,
      settings_changed: true,
      deleted: true,
      release_now: true,
      slider: true,
      cli: true,
      failover: true,
      reclaimed: true,
      ready: true,
      spot_paused: true,
      spot_resumed: true,
      host_back: true,
      upkeep: true,
      host_added: true,
      host_removed: true,
      host_draining: true,
      host_forgotten: true,
      confirm_limits_changed: true,
      budget_changed: true,
      rules_saved: true,
      rules_mode: true,
      rule_decision: true,
      budget_override: true,
      slurm: true,
      team_changed: true,
      team_quota: true,
      pool_team: true,
      role_granted: true,
      refused: true,
      quota_clamp: true,
      spend_quota_clamp: true,
      note: true,
    });
    expectEveryKind(lint, {
      flapping: true,
      cooldown_shorter_than_warmup: true,
      bands_overlap: true,
      unreachable: true,
      schedule_fights_limits: true,
      over_budget: true,
      set_outside_limits: true,
      target_unreachable: true,
      force_release_pays_again: true,
    });
    setLocale("zh-CN");
    expect(changeReasonText(draining)).toMatch(/[\u4e00-\u9fff]/);
  });

  it("have no English words left in zh-CN but metric and rule names", () => {
    setLocale("zh-CN");
    const texts = [
      ...rulesChanges.map(changeReasonText),
      ...lint.map(lintProblemText),
    ];
    for (const text of texts) {
      expect(text, text).toMatch(/[\u4e00-\u9fff]/);
      const rest = text.replace(/\b(gpu_util|queue_len|busy_gpus|users|out-at-80|out|in|limits|util-60|mornings|GPU|A100|Kubernetes|HPA)\b/g, "");
      expect(rest, text).not.toMatch(/[A-Za-z]{3,}/);
    }
  });
});

describe("Slurm steps in words", () => {
  it("have a fixture of every step", () => {
    const steps: Readonly<Record<SlurmStep["step"], true>> = {
      resumed: true,
      drained: true,
      undrained: true,
      released: true,
      parked: true,
      requeued: true,
      cancelled: true,
      cannot_serve: true,
      returned: true,
      replaced: true,
      unheld: true,
    };
    const seen = slurmChanges.map((c) => (c.kind === "slurm" ? c.step.step : c.kind));
    expect([...new Set(seen)].sort()).toEqual(Object.keys(steps).sort());
  });

  it("read in English as the Rust side writes them, with the parked lease's end in the viewer's clock", () => {
    expect(slurmChanges.map(changeReasonText)).toEqual([
      "Slurm batch: gpu[1-2] resumed (4 GPUs leased)",
      "Slurm batch: gpu[1-2] draining for scale-in (4 GPUs go back when their jobs end)",
      "Slurm batch: gpu[1-2] back in service",
      "Slurm batch: gpu[1-2] released (4 GPUs)",
      "Slurm batch: gpu[1-2] parked (4 GPUs kept to the end of the paid unit at 10:45)",
      "Slurm batch: gpu[1-2] requeued 2 jobs to go back",
      "Slurm batch: cannot resume gpu3: GPU 1 on gpu-a is leased; marked down",
      "Slurm batch: gpu2 cancelled 1 job that could not be requeued (forced)",
      "Slurm batch: gpu2 taken out of service by Slurm (Duplicate jobid) and still wanted: resumed",
      "Slurm batch: gpu3 kept out of service by Slurm (Not responding): released, another node leased in its place",
      "Slurm batch: 2 jobs Slurm held after a failed launch let run again",
    ]);
    expect(changeReasonText(slurm({ step: "resumed" }, 1, "gpu1"))).toBe("Slurm batch: gpu1 resumed (1 GPU leased)");
    expect(changeReasonText(slurm({ step: "requeued", jobs: ["1041"] }, 2, "gpu1"))).toBe("Slurm batch: gpu1 requeued 1 job to go back");
  });

  it("read in Chinese with Slurm's own words (node names, the problem, down) kept", () => {
    setLocale("zh-CN");
    expect(changeReasonText(slurmChanges[0]!)).toBe("Slurm batch：gpu[1-2] 已恢复（已租用 4 块 GPU）");
    expect(changeReasonText(slurmChanges[4]!)).toBe("Slurm batch：gpu[1-2] 已挂起（4 块 GPU 保留至 10:45 已付费时段结束）");
    expect(changeReasonText(slurmChanges[6]!)).toBe("Slurm batch：无法恢复 gpu3：gpu-a 上的 GPU 1 已被租用；已标记为 down");
    for (const text of slurmChanges.map(changeReasonText)) {
      expect(text, text).toMatch(/[\u4e00-\u9fff]/);
      const rest = text
        .replace("gpu-a", "")
        .replace("Duplicate jobid", "")
        .replace("Not responding", "")
        .replace("gpu[1-2]", "")
        .replace(/\b(Slurm|batch|gpu2|gpu3|GPU|down)\b/g, "");
      expect(rest, text).not.toMatch(/[A-Za-z]{3,}/);
    }
  });
});

describe("a Slurm node's problem in words", () => {
  afterEach(() => setLocale("en"));
  const problems: NodeProblem[] = [
    { kind: "host_not_registered", host: "gpu-a" },
    { kind: "host_silent", host: "gpu-a" },
    { kind: "no_such_gpu", host: "gpu-a", index: 3 },
    { kind: "gpu_leased", host: "gpu-a", index: 3 },
    { kind: "gpu_unhealthy", host: "gpu-a", index: 3 },
    { kind: "said", words: "an older console's words" },
  ];

  it("has every kind, worded as Slurm's down reason says it in English", () => {
    const kinds: Readonly<Record<NodeProblem["kind"], true>> = {
      host_not_registered: true,
      host_silent: true,
      no_such_gpu: true,
      gpu_leased: true,
      gpu_unhealthy: true,
      refused: true,
      said: true,
    };
    expect(Object.keys(kinds).length).toBe(problems.length + 1);
    expect(problems.map(nodeProblemText)).toEqual([
      "host gpu-a is not registered",
      "host gpu-a does not answer",
      "host gpu-a has no GPU 3",
      "GPU 3 on gpu-a is leased",
      "GPU 3 on gpu-a is unhealthy",
      "an older console's words",
    ]);
  });

  it("reads in Chinese with no English left but names", () => {
    setLocale("zh-CN");
    for (const text of problems.slice(0, 5).map(nodeProblemText)) {
      expect(text, text).toMatch(/[\u4e00-\u9fff]/);
      expect(text.replace(/\b(gpu-a|gpu-b|GPU)\b/g, ""), text).not.toMatch(/[A-Za-z]{3,}/);
    }
  });
});

describe("counts in words", () => {
  afterEach(() => setLocale("en"));

  it("say one GPU, lease, warning or host in the singular and more in the plural (en)", () => {
    setLocale("en");
    expect(poolNoteText({ kind: "held_to_unit_end", gpus: 1 })).toBe("1 GPU kept until the paid unit ends");
    expect(poolNoteText({ kind: "held_to_unit_end", gpus: 2 })).toBe("2 GPUs kept until the paid unit ends");
    expect(changeReasonText({ kind: "host_back", host: "gpu-a", leases: 1 })).toBe("gpu-a is back: releasing its 1 stale lease, already replaced");
    expect(changeReasonText({ kind: "host_back", host: "gpu-a", leases: 3 })).toBe("gpu-a is back: releasing its 3 stale leases, already replaced");
    expect(changeReasonText({ kind: "upkeep", rented: 1, released: 2 })).toBe("count kept: 1 GPU(s) rented, 2 released (replacements, back to spot, paid units ended)");
    expect(changeReasonText({ kind: "confirm_limits_changed", above_gpus: 1, above_per_hour_fen: 100 })).toBe(
      "confirmation limits changed: ask above 1 GPU or ¥1.00 per hour",
    );
    const saved = (warnings: number): ChangeReason => ({ kind: "rules_saved", version: 1, mode: "enabled", added: [], removed: [], changed: [], warnings });
    expect(changeReasonText(saved(1))).toBe("rules saved as version 1 (enabled); 1 lint warning acknowledged");
    expect(changeReasonText(saved(2))).toBe("rules saved as version 1 (enabled); 2 lint warnings acknowledged");
    for (const text of [poolNoteText({ kind: "lost", gpus: 1 }), hostProblemText({ kind: "gpus_not_answering", gpus: 1 })]) {
      expect(text, text).not.toMatch(/\(s\)|\b1 GPUs\b/);
    }
  });

  it("have one form in zh-CN, which has no plural", () => {
    setLocale("zh-CN");
    expect(poolNoteText({ kind: "held_to_unit_end", gpus: 1 })).toBe("1 块 GPU 保留至已付费时段结束");
    expect(poolNoteText({ kind: "held_to_unit_end", gpus: 3 })).toBe("3 块 GPU 保留至已付费时段结束");
  });
});
