// Pool: pick a pool, see where it stands (desired, held, pending, releasing, lost, its
// phase in words, spend, each host's part and every lease), move the slider to see what a
// new count would cost and do before letting go, and create, edit or delete pools.
//
// On Solid: the pools are re-read every second while the view is shown (one request in
// flight) into a store reconciled by pool name, and each table reconciles its rows by
// host and by lease id, so a refresh updates values in place: the slider being dragged,
// a focused button and an open form are never replaced. The selected pool's card and
// slider are built once per pool (a new pool, a new slider).
//
// The parts, one concern each: pool-card.tsx (the state card; delete-confirm.tsx, its
// question), slider.tsx (the slider, its preview in preview.tsx and the commit's outcome
// in commit-outcome.tsx), host-table.tsx, lease-table.tsx, slurm-card.tsx (the Slurm
// partition of a bound pool), policy.tsx (the confirmation limits) and pool-form.tsx
// (create and edit).
//
// Stable selectors (end-to-end tests rely on these):
//   #view-pool                                the view; data-pool (the selected pool's name)
//   #pool-select                              the pool picker (a select; data-names, one name a line)
//   [data-testid="pool-error"]                role=alert: loading the pools (or release now, delete) failed
//   [data-testid="pool-empty"]                no pool yet; #pool-create-first opens the form
//   [data-testid="pool-rules"]                the pool's rules: data-mode="enforce|shadow|off|none" (rules-card.tsx)
//   [data-testid="pool-slider-rules"]         the slider's note when rules may move the count
//   [data-testid="pool-status"]               the selected pool's state card
//     [data-testid="pool-desired"] [data-testid="pool-actual"] [data-testid="pool-pending"]
//     [data-testid="pool-releasing"] [data-testid="pool-lost"]   numbers (text = the count)
//     [data-testid="pool-phase"]              data-phase="converged|scaling_out|…", the phase in words
//     [data-testid="pool-message"]            why it is not converged
//     [data-testid="pool-spend"]              month to date, projection, run rate, GPU-hours (or the problem);
//                                               [data-testid="pool-spend-spot|pool-spend-spot-saved"] when spot was used
//     [data-testid="pool-spot-held"]          held GPUs on spot (a pool that may take spot, or holds some)
//     [data-testid="pool-split"]              the desired count split: data-base, data-on-demand, data-spot;
//                                               [data-testid="pool-spot-mix"] the mix in words
//   .pool-slider-card                         the slider's card
//   #pool-slider ([data-testid="pool-slider"])           input type=range, min..max
//   #pool-count ([data-testid="pool-count-input"])       input type=number
//   #pool-apply ([data-testid="pool-apply"])             commits the value shown
//   [data-testid="pool-preview"]              data-state="idle|pending|ready|error", data-to
//     [data-testid="pool-preview-target"]     "6 GPUs (now 2)"
//     [data-testid="pool-preview-cost"]       the cost after, per hour and per month (data-per-hour-fen,
//                                               data-per-hour-before-fen, data-per-month-fen)
//     [data-testid="pool-preview-delta"]      signed change per hour and per month
//     [data-testid="pool-preview-free"]       free matching GPUs now, per host
//     [data-testid="pool-preview-split"]      the new count split (data-base, data-on-demand, data-spot) and
//                                               spot's saving an hour (data-saving-fen); for a spot pool
//     [data-testid="pool-preview-plan"]       "Rent 6: 4 on cn-east-001, 2 on cn-south-002"
//     [data-testid="pool-preview-error"]      role=alert, data-kind: the preview failed
//   [data-testid="pool-confirm"]              the confirmation question: confirmation_reason
//     #pool-confirm-yes ([data-testid="confirm-scale"]) #pool-confirm-no ([data-testid="cancel-scale"])
//   [data-testid="pool-commit"]               role=status: the committed change's outcome (data-outcome)
//   [data-testid="pool-commit-error"]         role=alert, data-kind: the change was refused
//   [data-testid="pool-slurm"]                a Slurm-bound pool's partition (slurm-card.tsx; absent for
//                                               a pool bound to none): data-partition, data-mode="ebb|slurm"
//     [data-testid="pool-slurm-mode"]         who decides, in words
//     [data-testid="pool-slurm-queue"]        the queue: [data-testid="pool-slurm-pending-gpus|pending-jobs|
//                                               allocated-gpus|oldest-wait"]
//     [data-testid="pool-slurm-unreachable"]  Slurm does not answer (its reason as detail)
//     [data-testid="pool-slurm-error"]        role=alert, data-kind: the partition could not be read
//     [data-testid="pool-slurm-nodes"]        tr[data-testid="pool-slurm-node"][data-node][data-state][data-lease]
//     [data-testid="pool-slurm-jobs"]         tr[data-testid="pool-slurm-job"][data-job][data-state][data-waits];
//                                               [data-testid="pool-slurm-jobs-more"] when the list leaves some out
//   [data-testid="pool-hosts"]                per-host table: tr[data-testid="pool-host-row"][data-host]
//                                               td[data-col="leased|pending|releasing|failed|error"]
//   [data-testid="pool-leases"]               leases: tr[data-testid="pool-lease-row"][data-lease][data-host][data-spot],
//                                               [data-testid="pool-lease-spot"] the spot badge
//   #pool-policy-gpus #pool-policy-cost #pool-policy-save [data-testid="pool-policy-status"]
//     [data-testid="pool-policy-error"]       role=alert, data-kind: the limits were not saved
//   #pool-new #pool-edit #pool-delete #pool-release-now   open the form / ask to delete / release kept GPUs
//   [data-testid="pool-delete-confirm"] #pool-delete-yes #pool-delete-no
//   #pool-form (data-mode="create|edit"), fields #pool-f-NAME, #pool-f-NAME-error,
//     region checkboxes #pool-f-regions input[name="regions"][value=REGION], #pool-f-save #pool-f-cancel,
//     the spot mix #pool-f-spot (a fieldset, disabled while not interruptible: [data-testid="pool-f-spot-off"]
//     says why), #pool-f-on_demand_floor #pool-f-spot_pct #pool-f-max_price_fen, [data-testid="pool-f-spot-example"]
//     [data-testid="pool-form-error"]          role=alert, data-kind: the save failed (no field named)

import { denial } from "../../access";
import { batch, createEffect, createMemo, createSignal, For, Show, type JSX } from "solid-js";
import { createStore, reconcile } from "solid-js/store";
import { commands, type PoolOptions, type PoolRules, type PoolView } from "../../bindings";
import { t } from "../../i18n";
import { call } from "../../ipc";
import { keepSelection } from "../../pool";
import { countSetter, sliderRulesNote, type CountSetter } from "../../pool-rules";
import type { UnsavedGate } from "../../unsaved";
import { ErrorAlert } from "../error-alert";
import { every, Live, liveView, poolsChanged } from "../../live";
import { mountView } from "../solid";
import type { View } from "../view";
import { HostTable } from "./host-table";
import { LeaseTable, type LeaseNode } from "./lease-table";
import { PoolCard, type PoolSummary } from "./pool-card";
import { PoolChart } from "./pool-chart";
import { PoolForm } from "./pool-form";
import { Policy } from "./policy";
import { RulesCard } from "./rules-card";
import { Slider } from "./slider";
import { SlurmCard } from "./slurm-card";

/** What moves with time alone (the leases' readings, the spend accruing, when the
 * enforcer last looked) is read again this often; every change comes as an event. */
const READINGS_MS = 5_000;

/** The selected pool outlives one view instance (a language change rebuilds the view). */
const memory: { selected: string | null } = { selected: null };

/**
 * The live parts of a pool the store keeps (the tables keep the hosts and leases), as its
 * own copy: reconciling mutates the store's objects, never the answer they came from.
 */
function summary(pool: PoolView): PoolSummary {
  const { hosts: _hosts, leases: _leases, ...rest } = structuredClone(pool);
  return rest;
}

/** An open form: a new object each time it opens, so reopening builds it afresh. */
type OpenForm = { pool: PoolView | null };

export function poolView(): View {
  const [state, setState] = createStore<{ pools: PoolSummary[] | null }>({ pools: null });
  /** The last answer as it came: the tables reconcile their own rows from it. */
  const [latest, setLatest] = createSignal<readonly PoolView[]>([], { equals: false });
  const [selected, setSelected] = createSignal<string | null>(memory.selected);
  const [options, setOptions] = createSignal<PoolOptions | null>(null);
  const [loadError, setLoadError] = createSignal<unknown>(null);
  /** Release now or delete failed: what, and why. */
  const [actionError, setActionError] = createSignal<{ lead: string; error: unknown } | null>(null);
  const [announcement, setAnnouncement] = createSignal("");
  const [form, setForm] = createSignal<OpenForm | null>(null);
  const [now, setNow] = createSignal(Date.now());
  /** The Slurm node of each lease (the Slurm card's last answer), to mark a draining one. */
  const [leaseNodes, setLeaseNodes] = createSignal<ReadonlyMap<string, LeaseNode>>(new Map());
  /** Bumped when the confirmation limits change: the slider asks again for what it shows. */
  const [limitsSaved, setLimitsSaved] = createSignal(0);
  /** Leases of the shown pool the operator ticked to give back (the slider previews those). */
  const [picked, setPicked] = createSignal<readonly string[]>([]);
  /** The shown pool's rules (undefined until read, null: none) and who set its count. */
  const [rules, setRules] = createSignal<PoolRules | null | undefined>(undefined);
  const [rulesFailed, setRulesFailed] = createSignal(false);
  const [setter, setSetter] = createSignal<CountSetter | null>(null);
  let rulesLoading = false;
  let disposed = false;
  let picker: HTMLSelectElement | undefined;
  let newButton: HTMLButtonElement | undefined;
  let editButton: HTMLButtonElement | undefined;

  const names = createMemo(() => (state.pools ?? []).map((p) => p.name));
  /** The selected pool's store entry: the same object across refreshes (reconciled by name). */
  const pool = createMemo(() => state.pools?.find((p) => p.name === selected()));
  const raw = (name: string): PoolView | undefined => latest().find((p) => p.name === name);

  function choose(name: string | null): void {
    if (name !== selected()) {
      setPicked([]);
      setRules(undefined);
      setRulesFailed(false);
      setSetter(null);
    }
    memory.selected = name;
    setSelected(name);
  }

  function pick(id: string, on: boolean): void {
    const now = picked();
    if (on && !now.includes(id)) setPicked([...now, id]);
    else if (!on && now.includes(id)) setPicked(now.filter((x) => x !== id));
  }

  /** Reads the pools again (one read at a time: see live.ts); resolves once read. */
  const refresh = (): Promise<void> => followed.request();

  async function load(): Promise<void> {
    if (disposed) return;
    const res = await call(() => commands.listPools());
    if (disposed) return;
    batch(() => {
      if (res.status === "ok") {
        setLatest(res.data);
        setState("pools", reconcile(res.data.map(summary), { key: "name" }));
        setLoadError(null);
        choose(keepSelection(res.data.map((p) => p.name), memory.selected));
        // A ticked lease that is gone or going is no longer a choice.
        const active = new Set(
          (res.data.find((p) => p.name === selected())?.leases ?? []).filter((l) => l.state === "active").map((l) => l.lease_id),
        );
        if (picked().some((id) => !active.has(id))) setPicked(picked().filter((id) => active.has(id)));
      } else {
        setLoadError(res.error);
      }
      setNow(Date.now());
    });
    void loadRules();
  }

  /** The shown pool's rules and its latest changes: what the rules card and the phase say. */
  async function loadRules(): Promise<void> {
    const name = selected();
    if (rulesLoading || disposed || name === null) return;
    rulesLoading = true;
    const [ruled, log] = await Promise.all([
      call(() => commands.poolRules(name)),
      call(() => commands.listActivity(name, 50)),
    ]);
    rulesLoading = false;
    if (disposed || selected() !== name) return;
    batch(() => {
      if (ruled.status === "ok") {
        setRules(ruled.data);
        setRulesFailed(false);
      } else {
        setRulesFailed(true);
      }
      if (log.status === "ok") setSetter(countSetter(log.data));
    });
  }

  async function loadOptions(): Promise<void> {
    const res = await call(() => commands.poolOptions());
    if (!disposed && res.status === "ok") setOptions(res.data);
  }

  async function releaseNow(name: string): Promise<void> {
    setActionError(null);
    const res = await call(() => commands.releaseNow(name));
    if (disposed) return;
    if (res.status === "ok") {
      setAnnouncement(t("pool.releasedNow", { name }));
      await refresh();
    } else {
      setActionError({ lead: t("pool.releaseNowError", { name }), error: res.error });
    }
  }

  async function deletePool(name: string): Promise<void> {
    setActionError(null);
    const res = await call(() => commands.deletePool(name));
    if (disposed) return;
    if (res.status === "ok") {
      setAnnouncement(t("pool.deleted", { name }));
      if (form()?.pool?.name === name) setForm(null);
      await refresh();
      picker?.focus();
    } else {
      setActionError({ lead: t("pool.deleteError", { name }), error: res.error });
    }
  }

  /** The open form's gate (unsaved.ts): replacing the form asks it first. */
  let formGate: UnsavedGate | null = null;

  /** Runs `then` once the open form (if any) may go: at once, or after Discard. */
  function leaveForm(then: () => void): boolean {
    if (form() === null || formGate === null) {
      then();
      return true;
    }
    return formGate.leave(then) === "left";
  }

  function openForm(editing: PoolView | null): void {
    leaveForm(() => setForm({ pool: editing }));
  }

  const shownError = (): { lead: string; error: unknown } | null => {
    const action = actionError();
    if (action) return action;
    const error = loadError();
    return error === null ? null : { lead: t("pool.loadFailed"), error };
  };

  function PoolPage(): JSX.Element {
    let header: HTMLElement | undefined;
    // The view's <section> is the header's parent; it names the pool shown.
    createEffect(() => {
      const section = header?.parentElement;
      if (section) section.dataset.pool = pool()?.name ?? "";
    });
    return (
      <>
        <header class="view-header" ref={header}>
          <h1 id="view-pool-title">{t("pool.title")}</h1>
          <p class="lead">{t("pool.lead")}</p>
        </header>
        <div class="pool-error-box">
          <Show when={shownError()}>
            {(shown) => <ErrorAlert lead={shown().lead} error={shown().error} testid="pool-error" />}
          </Show>
        </div>
        <div class="pool-picker" hidden={state.pools?.length === 0}>
          <div class="field">
            <label for="pool-select">{t("pool.select")}</label>
            <select
              id="pool-select"
              ref={picker}
              data-names={names().join("\n")}
              disabled={names().length === 0}
              value={selected() ?? ""}
              onChange={(event) => {
                const wanted = event.currentTarget.value || null;
                const left = leaveForm(() => {
                  choose(wanted);
                  setForm(null);
                  setActionError(null);
                });
                // Asked first: the picker shows the pool still shown until Discard.
                if (!left) event.currentTarget.value = selected() ?? "";
              }}
            >
              <For each={names()}>
                {(name) => (
                  <option value={name} selected={name === selected()}>
                    {name}
                  </option>
                )}
              </For>
            </select>
          </div>
          <div class="pool-picker-actions">
            <button
              type="button"
              id="pool-new"
              class="btn"
              ref={newButton}
              disabled={denial("pools") !== null}
              title={denial("pools") ?? undefined}
              onClick={() => openForm(null)}
            >
              {t("pool.new")}
            </button>
          </div>
        </div>
        <p class="pool-announce" role="status" data-testid="pool-announce">
          {announcement()}
        </p>
        <div class="pool-empty-box">
          <Show
            when={state.pools}
            fallback={
              <Show when={loadError() === null}>
                <p class="loading">{t("pool.loading")}</p>
              </Show>
            }
          >
            {(pools) => (
              <Show when={pools().length === 0 && form() === null}>
                <div class="empty-state" data-testid="pool-empty">
                  <h2>{t("pool.none.title")}</h2>
                  <p>{t("pool.none.body")}</p>
                  <button
                    type="button"
                    class="btn btn-primary"
                    id="pool-create-first"
                    disabled={denial("pools") !== null}
                    title={denial("pools") ?? undefined}
                    onClick={() => openForm(null)}
                  >
                    {t("pool.new")}
                  </button>
                </div>
              </Show>
            )}
          </Show>
        </div>
        <Show when={pool()} keyed>
          {(shown) => (
            <>
              <div class="pool-top">
                <PoolCard
                  pool={shown}
                  now={now()}
                  setter={setter()}
                  editRef={(el) => (editButton = el)}
                  onEdit={() => openForm(raw(shown.name) ?? null)}
                  onReleaseNow={() => releaseNow(shown.name)}
                  onDelete={() => deletePool(shown.name)}
                />
                <Slider
                  pool={shown}
                  rulesNote={() => sliderRulesNote(rules() ?? null)}
                  now={now}
                  limitsSaved={limitsSaved}
                  picked={picked}
                  clearPicked={() => setPicked([])}
                  announce={setAnnouncement}
                  refresh={() => void refresh()}
                />
              </div>
              <RulesCard
                rules={rules()}
                failed={rulesFailed()}
                setter={setter()}
                heldToUnitEnd={shown.held_to_unit_end}
                now={now()}
              />
              <SlurmCard
                pool={shown.name}
                onNodes={(nodes) =>
                  setLeaseNodes(
                    new Map(nodes.flatMap((n) => (n.lease_id === null ? [] : [[n.lease_id, { node: n.name, state: n.state }] as const]))),
                  )
                }
              />
              <PoolChart pool={shown.name} />
              <HostTable pool={shown.name} hosts={raw(shown.name)?.hosts ?? []} />
              <LeaseTable
                pool={shown.name}
                leases={raw(shown.name)?.leases ?? []}
                nodes={leaseNodes()}
                now={now()}
                picked={picked()}
                onPick={pick}
                onClearPicked={() => setPicked([])}
              />
            </>
          )}
        </Show>
        <div class="pool-form-box">
          <Show when={form()} keyed>
            {(open) => (
              <PoolForm
                pool={open.pool}
                options={options()}
                gateRef={(gate) => (formGate = gate)}
                onDone={async (saved, created) => {
                  setForm(null);
                  choose(saved.name);
                  setAnnouncement(t(created ? "pool.created" : "pool.saved", { name: saved.name }));
                  await refresh();
                  picker?.focus();
                }}
                onCancel={() => {
                  setForm(null);
                  (open.pool ? editButton : newButton)?.focus();
                }}
              />
            )}
          </Show>
        </div>
        <div class="pool-policy-box">
          <Show when={options()}>
            {(loaded) => <Policy options={loaded()} onSaved={() => setLimitsSaved((n) => n + 1)} />}
          </Show>
        </div>
      </>
    );
  }

  const { el, dispose } = mountView("pool", { className: "view view-pool", labelledBy: "view-pool-title" }, () => <PoolPage />);

  // The shown pool's changes, and any that adds or removes a pool (one not in the list).
  const followed = new Live(load, [
    poolsChanged((changed) => changed === null || changed.some((name) => name === selected() || !names().includes(name))),
    every(READINGS_MS),
  ]);
  void refresh();
  void loadOptions();

  return liveView({ el, dispose }, followed, () => (disposed = true));
}
