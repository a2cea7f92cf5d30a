import { describe, expect, it } from "vitest";
import { firstUnsaved, leaveForms, registerUnsaved, UnsavedGate, valuesDiffer } from "./unsaved";

function gate(dirty: boolean, busy = false): { gate: UnsavedGate; asking: boolean[] } {
  const asking: boolean[] = [];
  return { gate: new UnsavedGate(() => dirty, (on) => asking.push(on), () => busy), asking };
}

describe("valuesDiffer", () => {
  const opened = { name: "", regions: ["cn-east", "cn-north"], max: "8", interruptible: false };
  it("is false for a form as it opened, however its lists were reordered", () => {
    expect(valuesDiffer({ ...opened }, opened)).toBe(false);
    expect(valuesDiffer({ ...opened, regions: ["cn-north", "cn-east"] }, opened)).toBe(false);
  });
  it("is false for whitespace typed into an empty field", () => {
    expect(valuesDiffer({ ...opened, name: "  " }, opened)).toBe(false);
  });
  it("is true for anything typed, ticked or chosen", () => {
    expect(valuesDiffer({ ...opened, name: "train" }, opened)).toBe(true);
    expect(valuesDiffer({ ...opened, regions: ["cn-east"] }, opened)).toBe(true);
    expect(valuesDiffer({ ...opened, max: "9" }, opened)).toBe(true);
    expect(valuesDiffer({ ...opened, interruptible: true }, opened)).toBe(true);
  });
});

describe("UnsavedGate", () => {
  it("closes an unchanged form at once, without asking", () => {
    const { gate: g, asking } = gate(false);
    let closed = 0;
    expect(g.leave(() => closed++)).toBe("left");
    expect(closed).toBe(1);
    expect(asking).toEqual([]);
  });

  it("asks before closing a changed form, and closes only on Discard", () => {
    const { gate: g, asking } = gate(true);
    let closed = 0;
    expect(g.leave(() => closed++)).toBe("asking");
    expect(closed).toBe(0);
    expect(asking).toEqual([true]);
    expect(g.isAsking()).toBe(true);
    g.discard();
    expect(closed).toBe(1);
    expect(asking).toEqual([true, false]);
    expect(g.isAsking()).toBe(false);
  });

  it("keeps the form on Keep editing, and a later Discard does not run the old close", () => {
    const { gate: g } = gate(true);
    let closed = 0;
    g.leave(() => closed++);
    g.keep();
    g.discard();
    expect(closed).toBe(0);
  });

  it("does nothing while a save is in flight", () => {
    const { gate: g, asking } = gate(true, true);
    let closed = 0;
    expect(g.leave(() => closed++)).toBe("busy");
    expect(closed).toBe(0);
    expect(asking).toEqual([]);
  });
});

describe("leaving a view with open forms", () => {
  it("proceeds at once when no open form is changed", () => {
    const clean = gate(false);
    const off = registerUnsaved(clean.gate);
    let left = 0;
    expect(leaveForms(() => left++)).toBe(true);
    expect(left).toBe(1);
    off();
  });

  it("asks through the changed form and proceeds only on Discard", () => {
    const clean = gate(false);
    const changed = gate(true);
    const offClean = registerUnsaved(clean.gate);
    const offChanged = registerUnsaved(changed.gate);
    expect(firstUnsaved()).toBe(changed.gate);
    let left = 0;
    expect(leaveForms(() => left++)).toBe(false);
    expect(left).toBe(0);
    expect(changed.asking).toEqual([true]);
    changed.gate.discard();
    expect(left).toBe(1);
    offChanged();
    offClean();
    expect(firstUnsaved()).toBeNull();
  });

  it("forgets a form once it is unregistered", () => {
    const changed = gate(true);
    registerUnsaved(changed.gate)();
    let left = 0;
    expect(leaveForms(() => left++)).toBe(true);
    expect(left).toBe(1);
  });
});
