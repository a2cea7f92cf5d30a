export type ViewId = "fleet" | "pool" | "rules" | "costs" | "activity" | "settings";

export const VIEW_IDS: readonly ViewId[] = ["fleet", "pool", "rules", "costs", "activity", "settings"];

export function isViewId(value: string): value is ViewId {
  return (VIEW_IDS as readonly string[]).includes(value);
}

/** A mounted view: its root element plus lifecycle hooks. */
export interface View {
  readonly el: HTMLElement;
  /** Called once the element is in the document (sizes are known). */
  mounted?(): void;
  /** Called before the view is thrown away: drop subscriptions. */
  destroy?(): void;
}
