// The Slurm partition a pool is bound to (slurm.toml): who decides how many nodes are up,
// the partition's queue (or that Slurm does not answer, and why), each node (its state in
// words beside Slurm's own, the host and GPUs it is, the lease holding them, its jobs and
// Slurm's reason) and the queue's jobs. Shown only for a bound pool: a pool bound to none
// gets no card.
//
// On Solid: asked for when the pool is shown, when it changes, and every 5 s (Slurm's queue
// is another program's; one request in flight, live.ts);
// the nodes are a store reconciled by node name and the jobs by job id, so a refresh
// updates cells in place. A failed refresh keeps the last answer under the error.

import { batch, createSignal, For, onCleanup, Show, type JSX } from "solid-js";
import { createStore, reconcile } from "solid-js/store";
import { commands, type SlurmJobView, type SlurmNodeView, type SlurmPoolView } from "../../bindings";
import { formatCount, gpus } from "../../costs";
import { t } from "../../i18n";
import { call } from "../../ipc";
import { indexesText } from "../../pool";
import { jobStateText, minutesText, moreJobsText, namesText, nodeStateText, nodeStateTone, slurmModeText, slurmReasonText, yesNoText } from "../../slurm";
import { ErrorAlert, ErrorDetail } from "../error-alert";
import { Stat } from "./pool-card";
import { every, poolChanged, useLive } from "../../live";

/** Slurm's queue moves without Ebb: asked again this often. */
const QUEUE_MS = 5_000;

/** The partition as the card follows it: the nodes and jobs live in their own stores. */
type Partition = Omit<SlurmPoolView, "nodes" | "jobs">;

function NodeRow(props: { node: SlurmNodeView }): JSX.Element {
  const node = props.node;
  return (
    <tr data-testid="pool-slurm-node" data-node={node.name} data-state={node.state} data-lease={node.lease_id ?? ""}>
      <th scope="row" class="mono">
        {node.name}
      </th>
      <td>
        <span class={`slurm-state slurm-tone-${nodeStateTone(node.state) || "plain"}`}>{nodeStateText(node.state)}</span>{" "}
        <span class="muted mono slurm-state-text">{node.state_text}</span>
      </td>
      <td>{node.host}</td>
      <td class="mono">{indexesText(node.gpu_indexes)}</td>
      <td class="mono">{node.lease_id ?? t("common.empty")}</td>
      <td class="mono">{namesText(node.jobs)}</td>
      <td class="slurm-reason" title={node.reason ?? undefined}>
        {slurmReasonText(node.reason)}
      </td>
    </tr>
  );
}

function JobRow(props: { job: SlurmJobView }): JSX.Element {
  const job = props.job;
  return (
    <tr data-testid="pool-slurm-job" data-job={job.id} data-state={job.state} data-waits={String(job.waits_for_gpus)}>
      <th scope="row" class="mono">
        {job.id}
      </th>
      <td>{jobStateText(job.state)}</td>
      <td class="num">{formatCount(job.gpus)}</td>
      <td class="slurm-reason" title={job.reason || undefined}>
        {slurmReasonText(job.reason)}
      </td>
      <td>{yesNoText(job.waits_for_gpus)}</td>
      <td class="num">{minutesText(job.waited_s)}</td>
    </tr>
  );
}

export function SlurmCard(props: {
  pool: string;
  /** Each answer's nodes (none for a pool bound to no partition), for the lease table. */
  onNodes?: (nodes: readonly SlurmNodeView[]) => void;
}): JSX.Element {
  /** undefined until the first answer; null: the pool is bound to no partition. */
  const [partition, setPartition] = createSignal<Partition | null | undefined>(undefined);
  const [rows, setRows] = createStore<{ nodes: SlurmNodeView[]; jobs: SlurmJobView[] }>({ nodes: [], jobs: [] });
  const [error, setError] = createSignal<unknown>(null);
  let disposed = false;

  async function load(): Promise<void> {
    if (disposed) return;
    const res = await call(() => commands.poolSlurm(props.pool));
    if (disposed) return;
    if (res.status === "ok") {
      setError(null);
      const view = res.data;
      if (view === null) {
        setPartition(null);
        setRows({ nodes: [], jobs: [] });
        props.onNodes?.([]);
        return;
      }
      // The stores own their copies: reconciling mutates them, never the answer.
      const { nodes, jobs, ...rest } = structuredClone(view);
      batch(() => {
        setRows("nodes", reconcile(nodes, { key: "name" }));
        setRows("jobs", reconcile(jobs, { key: "id" }));
        setPartition(rest);
      });
      props.onNodes?.(view.nodes);
    } else {
      setError(res.error);
    }
  }

  useLive(load, [poolChanged(() => props.pool), every(QUEUE_MS)]);
  onCleanup(() => (disposed = true));

  // A partition read once stays shown under a failed refresh; an error before any answer
  // still shows (a broken slurm.toml), as the card's only content.
  const shown = () => partition() != null || error() !== null;
  const more = () => {
    const p = partition();
    return p ? moreJobsText({ jobs: rows.jobs, jobs_total: p.jobs_total }) : null;
  };

  return (
    <Show when={shown()}>
      <section
        class="card pool-slurm"
        data-testid="pool-slurm"
        data-partition={partition()?.partition ?? ""}
        data-mode={partition()?.mode ?? ""}
        aria-labelledby="pool-slurm-title"
      >
        <h2 id="pool-slurm-title">
          {partition() ? t("pool.slurm.title", { partition: partition()!.partition }) : t("pool.slurm.titleNone")}
        </h2>
        <Show when={error() !== null}>
          <ErrorAlert lead={t("pool.slurm.loadError")} error={error()} testid="pool-slurm-error" />
        </Show>
        <Show when={partition()}>
          {(p) => (
            <>
              <p class="pool-slurm-mode" data-testid="pool-slurm-mode">
                {slurmModeText(p().mode)}
                <span class="muted"> · {t("pool.slurm.perNode", { gpus: gpus(p().gpus_per_node) })}</span>
              </p>
              <Show when={p().simulated}>
                <p class="hint" data-testid="pool-slurm-simulated">
                  {t("pool.slurm.simulated")}
                </p>
              </Show>
              <h3>{t("pool.slurm.queue.title")}</h3>
              <Show
                when={p().queue}
                fallback={
                  <div class="alert alert-warn" data-testid="pool-slurm-unreachable">
                    <span class="alert-line">{t("pool.slurm.unreachable")}</span>
                    <Show when={p().unreachable}>{(why) => <ErrorDetail text={why()} english />}</Show>
                  </div>
                }
              >
                {(queue) => (
                  <dl class="pool-stats" data-testid="pool-slurm-queue">
                    <Stat label="pool.slurm.queue.pendingGpus" value={queue().pending_gpus} testid="pool-slurm-pending-gpus" main />
                    <Stat label="pool.slurm.queue.pendingJobs" value={queue().pending_jobs} testid="pool-slurm-pending-jobs" />
                    <Stat label="pool.slurm.queue.allocatedGpus" value={queue().allocated_gpus} testid="pool-slurm-allocated-gpus" />
                    <Stat label="pool.slurm.queue.oldestWait" value={minutesText(queue().oldest_wait_s)} testid="pool-slurm-oldest-wait" />
                  </dl>
                )}
              </Show>
              <h3>{t("pool.slurm.nodes.title")}</h3>
              <Show
                when={rows.nodes.length > 0}
                fallback={
                  <p class="hint" data-testid="pool-slurm-nodes-none">
                    {t("pool.slurm.nodes.none")}
                  </p>
                }
              >
                <div class="table-wrap">
                  <table class="hosts pool-slurm-nodes" data-testid="pool-slurm-nodes">
                    <caption class="visually-hidden">{t("pool.slurm.nodes.caption", { partition: p().partition })}</caption>
                    <thead>
                      <tr>
                        <th scope="col">{t("pool.slurm.col.node")}</th>
                        <th scope="col">{t("pool.col.state")}</th>
                        <th scope="col">{t("pool.col.host")}</th>
                        <th scope="col">{t("pool.col.gpus")}</th>
                        <th scope="col">{t("pool.slurm.col.lease")}</th>
                        <th scope="col">{t("pool.slurm.col.running")}</th>
                        <th scope="col">{t("pool.slurm.col.reason")}</th>
                      </tr>
                    </thead>
                    <tbody>
                      <For each={rows.nodes}>{(node) => <NodeRow node={node} />}</For>
                    </tbody>
                  </table>
                </div>
              </Show>
              <h3>
                {t("pool.slurm.jobs.title")}
                <span class="count">{formatCount(p().jobs_total)}</span>
              </h3>
              <Show
                when={rows.jobs.length > 0}
                fallback={
                  <p class="hint" data-testid="pool-slurm-jobs-none">
                    {t("pool.slurm.jobs.none")}
                  </p>
                }
              >
                <div class="table-wrap">
                  <table class="hosts pool-slurm-jobs" data-testid="pool-slurm-jobs">
                    <caption class="visually-hidden">{t("pool.slurm.jobs.caption", { partition: p().partition })}</caption>
                    <thead>
                      <tr>
                        <th scope="col">{t("pool.slurm.col.job")}</th>
                        <th scope="col">{t("pool.col.state")}</th>
                        <th scope="col" class="num">
                          {t("fleet.col.gpus")}
                        </th>
                        <th scope="col">{t("pool.slurm.col.reason")}</th>
                        <th scope="col">{t("pool.slurm.col.waitsForGpus")}</th>
                        <th scope="col" class="num">
                          {t("pool.slurm.col.waited")}
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      <For each={rows.jobs}>{(job) => <JobRow job={job} />}</For>
                    </tbody>
                  </table>
                </div>
              </Show>
              <Show when={more()}>
                {(text) => (
                  <p class="hint" data-testid="pool-slurm-jobs-more">
                    {text()}
                  </p>
                )}
              </Show>
            </>
          )}
        </Show>
      </section>
    </Show>
  );
}
