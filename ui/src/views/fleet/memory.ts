// The operator's choices outlive a Fleet view rebuilt for a language change: the ranges,
// the host filters and the chart page.

import { NO_FILTER, type HostFilter } from "../../capacity";
import type { RangeId } from "../../history";

export const memory: { detailRange: RangeId; heatmapRange: RangeId; filter: HostFilter; chartPage: number } = {
  detailRange: "5m",
  heatmapRange: "1h",
  filter: { ...NO_FILTER },
  chartPage: 0,
};
