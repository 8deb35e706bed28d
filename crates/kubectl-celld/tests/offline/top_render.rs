//! `top`: fleets in pressure order (activations waiting for capacity, then pressured nodes,
//! then nodes without headroom, then name), the other orders, a celld v0.4 fleet's signals
//! shown as `-`, fleets never read at the end; the table, `-o wide`, `-A` and `-o json`
//! (snapshots).

use crate::capacity_fixtures::{GIB, MIB, fleet, legacy, node, unread, web, with_capacity};
use crate::status_render::now;
use celld_api::CelldFleet;
use kubectl_celld::commands::top::rows::{self, SortBy, TopList, TopRow};

/// `apps/api`: nothing waits, 2 of 3 nodes pressured.
fn api() -> CelldFleet {
    with_capacity(
        fleet("apps", "api", 3),
        vec![
            node("api-0", 400, 30, 0, 0, 0, true, false, 2 * GIB),
            node("api-1", 380, 28, 0, 0, 0, true, true, 2 * GIB),
            node("api-2", 120, 10, 0, 2, 0, false, true, GIB),
        ],
        20,
    )
}

/// `apps/batch`: nothing waits, nobody pressured, 1 node without headroom.
fn batch() -> CelldFleet {
    with_capacity(
        fleet("apps", "batch", 2),
        vec![
            node("batch-0", 5000, 60, 0, 0, 4, false, false, 3 * GIB),
            node("batch-1", 10, 2, 0, 0, 0, false, true, 200 * MIB),
        ],
        8,
    )
}

/// `edge/quiet`: all quiet.
fn quiet() -> CelldFleet {
    with_capacity(
        fleet("edge", "quiet", 1),
        vec![node("quiet-0", 3, 1, 0, 0, 0, false, true, 90 * MIB)],
        300,
    )
}

/// Every fixture fleet, in the API's order (namespace, name).
fn fleets() -> Vec<CelldFleet> {
    vec![api(), batch(), legacy(), unread(), web(), quiet()]
}

fn sorted(by: SortBy) -> Vec<TopRow> {
    let mut list: Vec<TopRow> = fleets().iter().map(rows::row).collect();
    rows::sort(&mut list, by);
    list
}

fn names(rows: &[TopRow]) -> Vec<&str> {
    rows.iter().map(|r| r.name.as_str()).collect()
}

#[test]
fn pressure_order_then_the_fleets_never_read() {
    let list = sorted(SortBy::Pressure);
    // web: 3 waiting; api: 0 waiting, 2 pressured; batch: 1 without headroom; quiet: none;
    // legacy reports no waiting at all; new was never read.
    assert_eq!(
        names(&list),
        ["web", "api", "batch", "quiet", "legacy", "new"]
    );
    let text = rows::render(&list, false, false, now());
    insta::assert_snapshot!("top_table", text);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("NAME ") && lines[0].ends_with("   READ"),
        "{text}"
    );
    let web = lines[1];
    for cell in ["2/3", "4", "3", "1/2", "45s"] {
        assert!(
            web.split("   ").any(|c| c.trim() == cell),
            "no {cell:?} in {web:?}"
        );
    }
    let new: Vec<&str> = lines
        .last()
        .unwrap()
        .split("   ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        new,
        [
            "new",
            "1/1",
            "1",
            "-",
            "-",
            "-",
            "-",
            "-",
            "-",
            "<not read>"
        ],
        "{text}"
    );
}

#[test]
fn other_orders() {
    assert_eq!(
        names(&sorted(SortBy::Rss)),
        ["api", "batch", "web", "legacy", "quiet", "new"]
    );
    assert_eq!(
        names(&sorted(SortBy::Cells)),
        ["batch", "web", "api", "quiet", "legacy", "new"]
    );
    assert_eq!(
        names(&sorted(SortBy::Name)),
        ["api", "batch", "legacy", "quiet", "web", "new"]
    );
}

/// Two fleets alike but for their namespace: by name, then namespace.
#[test]
fn ties_go_by_name_then_namespace() {
    let mut edge = api();
    edge.metadata.namespace = Some("edge".into());
    let mut list: Vec<TopRow> = [edge, quiet(), api()].iter().map(rows::row).collect();
    rows::sort(&mut list, SortBy::Pressure);
    let order: Vec<String> = list
        .iter()
        .map(|r| format!("{}/{}", r.namespace, r.name))
        .collect();
    assert_eq!(order, ["apps/api", "edge/api", "edge/quiet"]);
}

#[test]
fn wide_and_all_namespaces() {
    let list = sorted(SortBy::Pressure);
    let text = rows::render(&list, true, true, now());
    insta::assert_snapshot!("top_wide_all_namespaces", text);
    let header = text.lines().next().unwrap();
    assert!(header.starts_with("NAMESPACE   NAME "), "{header}");
    for column in ["ACTIVATION WAITING", "RESIDENT", "UNREADABLE", "HOLDING"] {
        assert!(header.contains(column), "{header}");
    }
    let web = text.lines().nth(1).unwrap();
    assert!(web.starts_with("apps        web "), "{web}");
    assert!(web.ends_with("   Cooldown"), "{web}");
}

/// celld v0.4 reports neither waiting activations nor pressure nor headroom: `-`, not 0.
#[test]
fn celld_v04_signals_are_not_shown_as_zero() {
    let row = rows::row(&legacy());
    let text = rows::render(&[row], false, true, now());
    let cells: Vec<&str> = text
        .lines()
        .nth(1)
        .unwrap()
        .split("   ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        cells,
        [
            "legacy",
            "2/2",
            "2",
            "-",
            "-",
            "-",
            "1",
            "-",
            "550.0 MiB",
            "2m10s",
            "-",
            "21",
            "0",
            "-"
        ],
        "{text}"
    );
}

#[test]
fn json_document() {
    let list = sorted(SortBy::Pressure);
    let doc = serde_json::to_value(TopList { fleets: list }).unwrap();
    insta::assert_snapshot!("top_json", serde_json::to_string_pretty(&doc).unwrap());
    let fleets = doc["fleets"].as_array().unwrap();
    assert_eq!(fleets[0]["name"], "web");
    assert_eq!(fleets[0]["desiredReplicas"], 4);
    assert_eq!(fleets[0]["autoscaling"]["maxReplicas"], 6);
    assert_eq!(fleets[0]["capacity"]["total"]["capacityWaiting"], 3);
    assert_eq!(fleets[0]["holding"]["reason"], "Cooldown");
    assert_eq!(fleets[4]["capacity"]["unreported"][0], "ownedCells");
    let new = &fleets[5];
    assert_eq!(new["name"], "new");
    assert!(new.get("capacity").is_none(), "{new}");
    assert!(new.get("holding").is_none(), "{new}");
    assert!(
        fleets
            .iter()
            .all(|f| f["capacity"].get("pressureReported").is_none()),
        "internal flags stay out of the document"
    );
}

#[test]
fn nothing_found_speaks_like_kubectl() {
    use kubectl_celld::commands::top::nothing_found;
    assert_eq!(
        nothing_found(Some("apps"), None),
        "No CelldFleets found in namespace apps."
    );
    assert_eq!(
        nothing_found(None, Some("team=web")),
        "No CelldFleets found in any namespace matching team=web."
    );
}
