import { afterEach, describe, expect, it } from "vitest";
import { worded } from "./fixtures/worded";
import { setLocale } from "./i18n";
import { phraseText } from "./phrase";
import { changeReasonText, clampText, decisionReasonText, ruleStatusText } from "./reasons";

afterEach(() => setLocale("en"));

describe("phrases from the shell", () => {
  it("render each argument by its kind: money in yuan, GPUs with their noun, a time on the viewer's clock, nested and joined phrases", () => {
    const at = new Date(2026, 0, 5, 10, 47).getTime();
    expect(
      phraseText({
        key: "reason.change.reclaimed",
        args: [
          { name: "host", value: { kind: "text", value: "gpu-a" } },
          { name: "gpus", value: { kind: "gpus", value: 2 } },
          { name: "time", value: { kind: "time", value: at } },
        ],
      }),
    ).toBe("gpu-a takes back 2 GPUs at 10:47 (its owner's reclaim notice): a replacement is ordered now");
    expect(clampText(worded.clamps.find((c) => c.kind === "budget" && c.per_hour_fen !== null)!)).toBe(
      "budget of ¥120.00/hour and ¥50,000.00/month: 8 → 5",
    );
    expect(phraseText({ key: "no.such.key", args: [] })).toBe("no.such.key");
  });

  it("read Rust's words for every rule state, clamp and decision reason, as the logs write them in English", () => {
    expect(ruleStatusText(worded.statuses[0]!)).toBe("gpu_util >= 80 for 3 min (last minute's mean 91.50): +20%");
    expect(ruleStatusText(worded.statuses[1]!)).toBe("gpu_util >= 80 for 2 of 3 minutes");
    expect(ruleStatusText(worded.statuses[2]!)).toBe("queue_len: last-minute mean 3, not > 10");
    expect(ruleStatusText(worded.statuses[6]!)).toBe("gpu_util: last-minute mean 62, within 10% of the target 60");
    expect(clampText(worded.clamps[0]!)).toBe("schedule mornings (at least 4): 2 → 4");
    expect(clampText(worded.clamps[5]!)).toBe("budget (no price to check it against): 8 → 4");
    expect(clampText(worded.clamps[9]!)).toBe("deadband: 1 surplus over 10 min, 2 needed: 3 → 4");
    expect(clampText(worded.clamps[10]!)).toBe("disruption budget: at most 1 released per 10 min (from 3): 1 → 2");
    expect(clampText(worded.clamps[11]!)).toMatch(/^quiet window until \d\d:\d\d: 3 busy kept: 1 → 3$/);
    expect(clampText(worded.clamps[12]!)).toBe("team ml's quota of 6 A100 GPUs: 8 → 4");
    expect(decisionReasonText(worded.reasons[2]!)).toBe("out held by the pool's max: 12 → 8");
    expect(decisionReasonText(worded.reasons[4]!)).toBe("no rule asks for a change");
    expect(worded.changes.map(changeReasonText)).toHaveLength(4);
  });

  it("have no English left in zh-CN but metric, rule and host names", () => {
    setLocale("zh-CN");
    const texts = [
      ...worded.statuses.map(ruleStatusText),
      ...worded.clamps.map(clampText),
      ...worded.reasons.map(decisionReasonText),
      ...worded.changes.map(changeReasonText),
    ];
    for (const text of texts) {
      expect(text, text).toMatch(/[\u4e00-\u9fff]/);
      const rest = text.replace(/\b(gpu_util|queue_len|busy_gpus|users|out-at-80|out|in|limits|util-60|mornings|GPU|A100|gpu-a|gpu-b|cn-east)\b/g, "");
      expect(rest, text).not.toMatch(/[A-Za-z]{3,}/);
    }
  });
});
