// PLACEHOLDER. This file is generated from the Rust shell by tauri-specta and is
// overwritten by that export; do not edit it by hand. Keep every IPC import in the
// UI going through "./bindings" so the generated file can replace this one.
import { invoke as TAURI_INVOKE } from "@tauri-apps/api/core";
import * as TAURI_API_EVENT from "@tauri-apps/api/event";
export const commands = {
  async appInfo(): Promise<AppInfo> { return await TAURI_INVOKE("app_info"); },
  async fleetSnapshot(): Promise<FleetSnapshot> { return await TAURI_INVOKE("fleet_snapshot"); },
  async utilizationChart(host: string, theme: ChartTheme, widthPx: number, heightPx: number): Promise<Result<string, IpcError>> {
    try { return { status: "ok", data: await TAURI_INVOKE("utilization_chart", { host, theme, widthPx, heightPx }) }; }
    catch (e) { if (e instanceof Error) throw e; else return { status: "error", error: e as any }; }
  },
};
export const events = {
  fleetTick: { listen: (cb: TAURI_API_EVENT.EventCallback<FleetTick>) => TAURI_API_EVENT.listen("fleet-tick", cb) },
};
export type AppInfo = { version: string; data_dir: string; demo: boolean };
export type ChartTheme = "light" | "dark";
export type Health = "online" | "offline" | "unknown";
export type HostStatus = { name: string; url: string; region: string; health: Health; gpu_count: number; models: string[]; mean_util_pct: number | null; last_error: string | null };
export type FleetSnapshot = { tick: number; hosts: HostStatus[] };
export type FleetTick = FleetSnapshot;
export type IpcError = { kind: string; message: string };
export type Result<T, E> = { status: "ok"; data: T } | { status: "error"; error: E };
