// The selected pool's state card: its name with Edit and Delete, what it is (model,
// regions, range, terms), its phase and why, the counts, Release now while GPUs are kept
// to the end of their paid unit, and the month's spend. A pool that may take spot also says
// its mix, how the desired count splits (base, on demand, spot), how many held GPUs are
// spot, and spot's part of the spend. Every value is read from the
// pool's store entry, so a refresh updates the text in place and the buttons stay put.

import { denial } from "../../access";
import { createSignal, Show, type JSX } from "solid-js";
import type { PoolView } from "../../bindings";
import { formatCount, formatMoney, gpus } from "../../costs";
import { t, type MessageKey } from "../../i18n";
import { formatGpuHours, formatWhen, overlayText, perHour, placementText, termText } from "../../pool";
import { phaseWords, type CountSetter } from "../../pool-rules";
import { poolNotesText, priceProblemText } from "../../reasons";
import { mixText, showsSpot, splitText } from "../../spot";
import { DeleteConfirm } from "./delete-confirm";

/** A pool as the card and the slider follow it: the hosts and leases live in their tables. */
export type PoolSummary = Omit<PoolView, "hosts" | "leases">;

/** One number of a card's `dl.pool-stats`: its label, its value (a count or words). */
export function Stat(props: { label: MessageKey; value: string | number; testid: string; main?: boolean }): JSX.Element {
  return (
    <div class={props.main ? "pool-stat pool-stat-main" : "pool-stat"}>
      <dt>{t(props.label)}</dt>
      <dd data-testid={props.testid}>{typeof props.value === "number" ? formatCount(props.value) : props.value}</dd>
    </div>
  );
}

function Spend(props: { pool: PoolSummary }): JSX.Element {
  return (
    <div class="pool-spend" data-testid="pool-spend">
      <h3>{props.pool.spend ? t("pool.spend.title", { month: props.pool.spend.month }) : t("pool.spend.titleNone")}</h3>
      <Show when={props.pool.spend}>
        {(spend) => (
          <dl class="pool-stats pool-spend-stats">
            <Stat label="pool.spend.mtd" value={formatMoney(spend().month_to_date_fen)} testid="pool-spend-mtd" />
            <Stat label="pool.spend.projected" value={formatMoney(spend().projected_month_fen)} testid="pool-spend-projected" />
            <Stat label="pool.spend.runRate" value={perHour(spend().run_rate_per_hour_fen)} testid="pool-spend-rate" />
            <Stat label="pool.spend.gpuHours" value={formatGpuHours(spend().gpu_hours)} testid="pool-spend-hours" />
            <Show when={(spend().spot_fen ?? 0) !== 0 || (spend().spot_saved_fen ?? 0) !== 0}>
              <Stat label="pool.spend.spot" value={formatMoney(spend().spot_fen ?? 0)} testid="pool-spend-spot" />
              {/* Net of what spot cost besides (replacements, fresh hours): a loss reads as one. */}
              <Stat
                label={(spend().spot_saved_fen ?? 0) < 0 ? "pool.spend.spotLost" : "pool.spend.spotSaved"}
                value={formatMoney(Math.abs(spend().spot_saved_fen ?? 0))}
                testid="pool-spend-spot-saved"
              />
            </Show>
          </dl>
        )}
      </Show>
      <Show when={props.pool.spend_problem}>
        {(problem) => (
          <p class="alert alert-warn" data-testid="pool-spend-problem">
            {t("pool.spend.problem", { message: priceProblemText(problem()) })}
          </p>
        )}
      </Show>
    </div>
  );
}

export function PoolCard(props: {
  pool: PoolSummary;
  now: number;
  /** Who set the count the pool holds (the phase names them). */
  setter: CountSetter | null;
  editRef: (el: HTMLButtonElement) => void;
  onEdit: () => void;
  onReleaseNow: () => Promise<void>;
  onDelete: () => Promise<void>;
}): JSX.Element {
  const [asking, setAsking] = createSignal(false);
  let deleteButton: HTMLButtonElement | undefined;
  const pool = props.pool;
  const notes = () => poolNotesText(pool.notes);
  return (
    <section class="card pool-status" data-testid="pool-status" aria-labelledby="pool-status-title">
      <div class="pool-status-head">
        <h2 id="pool-status-title">{pool.name}</h2>
        <span class="btn-row">
          <button
            type="button"
            id="pool-edit"
            class="btn btn-small"
            ref={props.editRef}
            disabled={asking() || denial("pools") !== null}
            title={denial("pools") ?? undefined}
            onClick={() => props.onEdit()}
          >
            {t("pool.edit")}
          </button>
          <button
            type="button"
            id="pool-delete"
            class="btn btn-small btn-danger-quiet"
            ref={deleteButton}
            aria-expanded={asking()}
            disabled={asking() || denial("pools") !== null}
            title={denial("pools") ?? undefined}
            onClick={() => setAsking(true)}
          >
            {t("pool.delete")}
          </button>
        </span>
      </div>
      <p class="pool-meta" data-testid="pool-meta">
        {t("pool.meta", {
          model: pool.model,
          regions: pool.regions.join(t("common.listSeparator")),
          min: formatCount(pool.min),
          max: formatCount(pool.max),
        })}
      </p>
      <p class="pool-terms">
        {t("pool.terms", {
          base: gpus(pool.base_gpus),
          term: termText(pool.term),
          overlay: overlayText(pool.overlay),
          placement: placementText(pool.placement),
        })}
      </p>
      <Show when={asking()}>
        <DeleteConfirm
          name={pool.name}
          gpus={pool.actual}
          onDelete={props.onDelete}
          onDone={() => setAsking(false)}
          onCancel={() => {
            setAsking(false);
            deleteButton?.focus();
          }}
        />
      </Show>
      <p class={`pool-phase phase-${pool.phase}`} data-testid="pool-phase" data-phase={pool.phase}>
        <span class="dot" aria-hidden="true" />
        {phaseWords(pool.phase, props.setter)}
      </p>
      <Show when={notes()}>
        {(text) => (
          <p class="pool-message" data-testid="pool-message" data-notes={pool.notes.map((n) => n.kind).join(" ")}>
            {text()}
          </p>
        )}
      </Show>
      <dl class="pool-stats">
        <Stat label="pool.stat.desired" value={pool.desired} testid="pool-desired" main />
        <Stat label="pool.stat.actual" value={pool.actual} testid="pool-actual" main />
        {/* Always shown, so the row does not shift as GPUs warm up and become ready. */}
        <Stat label="pool.stat.starting" value={pool.starting ?? 0} testid="pool-starting" />
        <Stat label="pool.stat.pending" value={pool.pending} testid="pool-pending" />
        <Stat label="pool.stat.releasing" value={pool.releasing} testid="pool-releasing" />
        <Stat label="pool.stat.lost" value={pool.lost} testid="pool-lost" />
        <Show when={pool.held_to_unit_end > 0}>
          <Stat label="pool.stat.held" value={pool.held_to_unit_end} testid="pool-held" />
        </Show>
        <Show when={showsSpot(pool)}>
          <Stat label="pool.stat.spotHeld" value={pool.spot_held} testid="pool-spot-held" />
        </Show>
      </dl>
      <Show when={showsSpot(pool)}>
        <p
          class="pool-terms pool-split"
          data-testid="pool-split"
          data-base={pool.split.base}
          data-on-demand={pool.split.on_demand}
          data-spot={pool.split.spot}
        >
          {t("pool.spot.splitLine", { desired: formatCount(pool.desired), split: splitText(pool.split) })}{" "}
          <span data-testid="pool-spot-mix">{t("pool.spot.mixLine", { mix: mixText(pool.spot) })}</span>
        </p>
      </Show>
      <Show when={pool.held_to_unit_end > 0}>
        <p class="pool-release-now">
          <button
            type="button"
            class="btn btn-small"
            id="pool-release-now"
            data-testid="pool-release-now"
            disabled={denial("scale") !== null}
            title={denial("scale") ?? t("pool.releaseNowHint")}
            onClick={() => void props.onReleaseNow()}
          >
            {t("pool.releaseNow")}
          </button>
        </p>
      </Show>
      <Spend pool={pool} />
      <p class="pool-checked hint">
        {pool.checked_at_ms === null ? t("pool.checkedNever") : t("pool.checked", { time: formatWhen(pool.checked_at_ms, props.now) })}
      </p>
    </section>
  );
}
