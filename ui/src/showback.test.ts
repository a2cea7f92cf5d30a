import { afterEach, describe, expect, it } from "vitest";
import type { Showback, ShowbackLine } from "./bindings";
import { setLocale } from "./i18n";
import { idleLine, idleShare, monthsUpTo, showbackRows, teamName } from "./showback";

afterEach(() => setLocale("en"));

function line(overlay: number, used: number, idle: number): ShowbackLine {
  return { overlay_fen: overlay, base_used_fen: used, idle_base_fen: idle, total_fen: overlay + used + idle, gpu_hours: 10, idle_base_gpu_hours: 4 };
}

const showback: Showback = {
  month: "2026-11",
  month_start_ms: 0,
  through_ms: 1,
  complete: true,
  teams: [
    { team: "nlp", pools: ["train"], spend: line(10, 30, 60) },
    { team: "", pools: ["misc", "odd"], spend: line(5, 0, 0) },
  ],
  pools: [
    { pool: "train", team: "nlp", model: "A100", base_gpus: 4, spend: line(10, 30, 60), spend_problem: null },
    { pool: "misc", team: "", model: "A100", base_gpus: 0, spend: line(5, 0, 0), spend_problem: null },
    { pool: "odd", team: "", model: "Z9", base_gpus: 0, spend: null, spend_problem: { kind: "no_region" } },
  ],
  total: line(15, 30, 60),
};

describe("showbackRows", () => {
  it("puts each team's pools beneath it and its idle base on a line of its own", () => {
    const rows = showbackRows(showback, () => "no price");
    expect(rows.map((r) => `${r.kind}:${"pool" in r ? r.pool : r.team}`)).toEqual([
      "team:nlp",
      "pool:train",
      "idle:nlp",
      "team:",
      "pool:misc",
      "unpriced:odd",
    ]);
    const idle = rows[2];
    if (idle?.kind !== "idle") throw new Error("the third row is nlp's idle base");
    expect(idle.line).toEqual(idleLine(line(10, 30, 60)));
    expect([idle.line.total_fen, idle.line.overlay_fen, idle.line.gpu_hours]).toEqual([60, 0, 4]);
    const unpriced = rows[5];
    if (unpriced?.kind !== "unpriced") throw new Error("the last row is the unpriced pool");
    expect(unpriced.problem).toBe("no price");
  });
});

describe("teamName and idleShare", () => {
  it("names the pools with no team and gives the idle base's share", () => {
    expect(teamName("nlp")).toBe("nlp");
    expect(teamName("")).toBe("(no team)");
    setLocale("zh-CN");
    expect(teamName("")).not.toBe("(no team)");
    expect(idleShare(line(10, 30, 60))).toBe("60%");
    expect(idleShare(line(0, 0, 0))).toBeNull();
    expect(idleShare(line(1_000, 0, 1))).toBe("<1%");
  });
});

describe("monthsUpTo", () => {
  it("counts back across the year", () => {
    expect(monthsUpTo("2026-02", 4)).toEqual(["2026-02", "2026-01", "2025-12", "2025-11"]);
    expect(monthsUpTo("2026-13", 3)).toEqual([]);
    expect(monthsUpTo("nov", 3)).toEqual([]);
  });
});
