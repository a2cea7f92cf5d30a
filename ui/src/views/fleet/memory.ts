// The operator's range choices outlive a Fleet view rebuilt for a language change.

import type { RangeId } from "../../history";

export const memory: { detailRange: RangeId; heatmapRange: RangeId } = { detailRange: "5m", heatmapRange: "1h" };
