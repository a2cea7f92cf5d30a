import { afterEach, describe, expect, it } from "vitest";
import type { SlurmJobState, SlurmJobView, SlurmMode, SlurmNodeState } from "./bindings";
import { setLocale } from "./i18n";
import { jobStateText, minutesText, moreJobsText, namesText, nodeStateText, nodeStateTone, slurmModeText, slurmReasonText, yesNoText } from "./slurm";

afterEach(() => setLocale("en"));

// Every state and mode, listed: one added in Rust is a type error here until it is worded.
const NODE_STATES: Readonly<Record<SlurmNodeState, true>> = {
  idle: true,
  allocated: true,
  draining: true,
  drained: true,
  parked: true,
  powered_down: true,
  powering_up: true,
  down: true,
  other: true,
};
const JOB_STATES: Readonly<Record<SlurmJobState, true>> = { pending: true, running: true, completing: true, configuring: true, other: true };
const MODES: Readonly<Record<SlurmMode, true>> = { ebb: true, slurm: true };

const job = (id: string): SlurmJobView => ({ id, state: "pending", reason: "Resources", gpus: 2, waits_for_gpus: true, waited_s: 600 });

describe("Slurm states in words", () => {
  it("word every node state, job state and mode in both languages, each apart", () => {
    for (const locale of ["en", "zh-CN"] as const) {
      setLocale(locale);
      const nodes = (Object.keys(NODE_STATES) as SlurmNodeState[]).map(nodeStateText);
      const jobs = (Object.keys(JOB_STATES) as SlurmJobState[]).map(jobStateText);
      const modes = (Object.keys(MODES) as SlurmMode[]).map(slurmModeText);
      for (const words of [nodes, jobs, modes]) {
        expect(new Set(words).size, words.join(" | ")).toBe(words.length);
        for (const word of words) expect(word.trim()).not.toBe("");
      }
      if (locale === "zh-CN") for (const word of [...nodes, ...jobs, ...modes]) expect(word, word).toMatch(/[\u4e00-\u9fff]/);
    }
  });

  it("say who decides", () => {
    expect(slurmModeText("ebb")).toBe("Ebb-led: the pool's rules decide, on the queue");
    expect(slurmModeText("slurm")).toBe("Slurm-led: Slurm's power saving decides");
    expect(nodeStateText("parked")).toBe("Parked, lease kept");
    expect(jobStateText("pending")).toBe("Pending");
    setLocale("zh-CN");
    expect(slurmModeText("slurm")).toBe("由 Slurm 主导：由 Slurm 的节能机制决定");
    expect(nodeStateText("draining")).toBe("缩容排空中");
    expect(jobStateText("running")).toBe("运行中");
  });

  it("tone a node that is going away or down", () => {
    expect(nodeStateTone("draining")).toBe("warn");
    expect(nodeStateTone("down")).toBe("bad");
    expect(nodeStateTone("idle")).toBe("");
  });
});

describe("Slurm numbers in words", () => {
  it("write waits in whole minutes", () => {
    expect(minutesText(0)).toBe("< 1 min");
    expect(minutesText(59)).toBe("< 1 min");
    expect(minutesText(60)).toBe("1 min");
    expect(minutesText(725)).toBe("12 min");
    expect(minutesText(null)).toBe("—");
    setLocale("zh-CN");
    expect(minutesText(725)).toBe("12 分钟");
    expect(minutesText(30)).toBe("不到 1 分钟");
  });

  it("say how many jobs the list leaves out, and nothing when it lists them all", () => {
    expect(moreJobsText({ jobs: [job("1"), job("2")], jobs_total: 2 })).toBeNull();
    expect(moreJobsText({ jobs: [job("1"), job("2")], jobs_total: 14 })).toBe("and 12 more");
    setLocale("zh-CN");
    expect(moreJobsText({ jobs: [job("1")], jobs_total: 3 })).toBe("另有 2 个作业未列出");
  });

  it("list job ids and say yes or no", () => {
    expect(namesText(["1041", "1042"])).toBe("1041, 1042");
    expect(namesText([])).toBe("—");
    expect(yesNoText(true)).toBe("Yes");
    setLocale("zh-CN");
    expect(namesText(["1041", "1042"])).toBe("1041、1042");
    expect(yesNoText(false)).toBe("否");
  });
});

describe("slurmReasonText", () => {
  it("words Slurm's None as no reason, the common pending reasons in words, any other as Slurm has it", () => {
    expect(slurmReasonText("None")).toBe("—");
    expect(slurmReasonText("")).toBe("—");
    expect(slurmReasonText(null)).toBe("—");
    expect(slurmReasonText("Resources")).toBe("Waiting for free nodes (Resources)");
    expect(slurmReasonText("Priority")).toBe("Behind jobs of higher priority (Priority)");
    expect(slurmReasonText("ReqNodeNotAvail")).toBe("ReqNodeNotAvail");
    setLocale("zh-CN");
    expect(slurmReasonText("None")).toBe("—");
    expect(slurmReasonText("Resources")).toBe("等待空闲节点（Resources）");
  });
});
