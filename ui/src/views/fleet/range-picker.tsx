// A range choice (5 min / 1 h / 24 h / 7 d) as radios: the heatmap's and a host detail's.
// The radios stay the same elements while the charts redraw, so the focus stays on them.

import { For, type JSX } from "solid-js";
import type { RangeId } from "../../history";
import { t, type MessageKey } from "../../i18n";

const SHORT: Readonly<Record<RangeId, MessageKey>> = {
  "5m": "fleet.range.5m",
  "1h": "fleet.range.1h",
  "24h": "fleet.range.24h",
  "7d": "fleet.range.7d",
};

const LONG: Readonly<Record<RangeId, MessageKey>> = {
  "5m": "fleet.rangeLong.5m",
  "1h": "fleet.rangeLong.1h",
  "24h": "fleet.rangeLong.24h",
  "7d": "fleet.rangeLong.7d",
};

/** "1 h": the radio's label. */
export function rangeShort(id: RangeId): string {
  return t(SHORT[id]);
}

/** "hour": as in "over the last hour". */
export function rangeLong(id: RangeId): string {
  return t(LONG[id]);
}

export function RangePicker(props: {
  /** `heatmap` or `detail`: names the group and its radios (#NAME-range-ID). */
  name: string;
  ids: readonly RangeId[];
  selected: RangeId;
  onChange: (id: RangeId) => void;
}): JSX.Element {
  return (
    <fieldset class="choice-group range-picker" data-testid={`${props.name}-range`}>
      <legend>{t("fleet.range.legend")}</legend>
      <div class="choices">
        <For each={props.ids}>
          {(id) => {
            const inputId = `${props.name}-range-${id}`;
            return (
              <label class="choice" for={inputId}>
                <input
                  type="radio"
                  id={inputId}
                  name={`${props.name}-range`}
                  value={id}
                  checked={id === props.selected}
                  onChange={() => props.onChange(id)}
                />
                <span>{rangeShort(id)}</span>
              </label>
            );
          }}
        </For>
      </div>
    </fieldset>
  );
}
