/// The app's own commands: `build.rs` makes a permission for each and
/// `capabilities/main.json` grants exactly these (a test checks it).
pub const COMMANDS: [&str; 14] = [
    "add_host",
    "app_info",
    "catalog_import",
    "catalog_show",
    "cost_plan",
    "export_chart",
    "fleet_heatmap_chart",
    "fleet_snapshot",
    "host_history_chart",
    "list_hosts",
    "remove_host",
    "test_host",
    "update_host",
    "utilization_chart",
];
