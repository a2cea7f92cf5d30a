import { afterEach, describe, expect, it } from "vitest";
import type { ChangeReason, ConfirmationReason, HostProblem, PoolNote } from "./bindings";
import { setLocale } from "./i18n";
import { changeReasonText, confirmationText, hostProblemText, poolNoteText, poolNotesText } from "./reasons";

afterEach(() => setLocale("en"));

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
  { kind: "confirm_limits_changed", above_gpus: 4, above_per_hour_fen: 10_000 },
  { kind: "budget_changed", budget_fen: 5_000_000 },
  { kind: "budget_changed", budget_fen: null },
];
const confirmations: ConfirmationReason[] = [
  { kind: "gpus", change: 3, limit: 2 },
  { kind: "cost_per_hour", delta_fen: 123_456, limit_fen: 10_000 },
];
const notes: PoolNote[] = [
  { kind: "not_enforced" },
  { kind: "short", gpus: 2, model: "A100", regions: ["cn-east"] },
  { kind: "host_failing", host: "gpu-a", problem: { kind: "refused", url } },
  { kind: "lost", gpus: 2 },
  { kind: "held_to_unit_end", gpus: 1 },
];

describe("structured reasons", () => {
  it("read in English as the Rust side writes them for logs and the CLI", () => {
    expect(changeReasonText(changes[7]!)).toBe(
      "gpu-a has not answered for 30 s: its 2 GPU(s) are written off and replaced elsewhere",
    );
    expect(changeReasonText(changes[5]!)).toBe("slider in the Pool view");
    expect(changes.slice(9).map(changeReasonText)).toEqual([
      "host gpu-a added in cn-east",
      "host gpu-a removed",
      "confirmation limits changed: ask above 4 GPUs or ¥100.00 per hour",
      "monthly budget set to ¥50,000.00",
      "monthly budget cleared",
    ]);
    expect(hostProblemText(problems[10]!)).toBe("http://gpu-a:7070 answered, but it is not an Ebb agent (wrong port?): x");
    expect(confirmationText(confirmations[1]!)).toBe("moves the cost by ¥1,234.56 per hour (more than ¥100.00)");
    expect(hostProblemText(problems[3]!)).toBe("no answer from http://gpu-a:7070 within 2000 ms");
    expect(poolNotesText([notes[3]!, notes[4]!])).toBe(
      "2 GPU(s) on unreachable hosts written off and being replaced; 1 GPU(s) kept until their paid unit ends",
    );
    expect(poolNotesText([])).toBeNull();
  });

  it("have no English words left in zh-CN, numbers and names kept", () => {
    setLocale("zh-CN");
    const texts = [
      ...changes.map(changeReasonText),
      ...problems.map(hostProblemText),
      ...confirmations.map(confirmationText),
      ...notes.map(poolNoteText),
    ];
    for (const text of texts) {
      expect(text, text).toMatch(/[\u4e00-\u9fff]/);
      // What may stay Latin: URLs, host and model names, region ids, HTTP, API, GPU, TLS, JSON, the CLI.
      const rest = text
        .replace(/https?:\/\/\S+?(?=[\s，：；（）]|$)/g, "")
        .replace(/\b(gpu-a|A100|cn-east|cn-south|HTTP|API|GPU|TLS|JSON|Ebb|ebb-agent|ebb pool scale|ebb daemon|v\d)\b/g, "");
      expect(rest, text).not.toMatch(/[A-Za-z]{3,}/);
    }
    expect(changeReasonText(changes[7]!)).toBe("gpu-a 已 30 秒无响应：其 2 块 GPU 已注销，并在别处补充");
  });
});
