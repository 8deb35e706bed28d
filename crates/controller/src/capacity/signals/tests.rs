use super::*;
use k8s_openapi::jiff::Timestamp;

fn node(name: &str, rss_mib: u64) -> NodeCapacity {
    NodeCapacity {
        name: name.into(),
        owned_cells: Some(40),
        resident_cells: Some(8),
        capacity_waiting: Some(0),
        activation_waiting: Some(0),
        restoring: Some(0),
        pressured: Some(false),
        memory_headroom: Some(true),
        rss_bytes: Some(rss_mib << 20),
        error: None,
    }
}

fn reading(nodes: Vec<NodeCapacity>) -> FleetReading {
    FleetReading {
        read_at: Timestamp::UNIX_EPOCH,
        nodes,
    }
}

const GIB: Option<MemoryBudget> = Some(MemoryBudget {
    per_node: 1 << 30,
    percent: 75,
});

fn hold(s: &Signals) -> Reason {
    s.down.as_ref().unwrap_err().reason
}

#[test]
fn room_to_lose_a_node_when_the_survivors_hold_its_memory() {
    let s = signals(
        &reading(vec![
            node("web-0", 300),
            node("web-1", 300),
            node("web-2", 300),
        ]),
        3,
        GIB,
    );
    assert_eq!(s.up, None);
    let why = s.down.unwrap();
    assert!(
        why.contains("the 2 survivors would use 900.0 MiB of 1.5 GiB (75% of 1.0 GiB each) once they hold web-2's 300.0 MiB"),
        "{why}"
    );
    let full = signals(
        &reading(vec![
            node("web-0", 600),
            node("web-1", 600),
            node("web-2", 600),
        ]),
        3,
        GIB,
    );
    assert_eq!(hold(&full), Reason::NoHeadroom);
    assert!(
        full.down
            .unwrap_err()
            .message
            .contains("1.8 GiB of 1.5 GiB")
    );
}

#[test]
fn waiting_activations_and_pressure_ask_for_nodes() {
    let mut busy = node("web-1", 100);
    busy.capacity_waiting = Some(4);
    let s = signals(&reading(vec![node("web-0", 100), busy]), 2, GIB);
    assert_eq!(
        s.up,
        Some((
            Reason::CapacityWaiting,
            "4 activations wait for capacity on 1 node (web-1 4)".into()
        ))
    );
    assert_eq!(hold(&s), Reason::NoHeadroom);
    let mut pressured = node("web-0", 100);
    pressured.pressured = Some(true);
    let s = signals(&reading(vec![pressured, node("web-1", 100)]), 2, GIB);
    assert_eq!(
        s.up,
        Some((
            Reason::Pressured,
            "1 node under memory pressure: web-0".into()
        ))
    );
}

#[test]
fn every_doubt_holds_the_scale_in() {
    let mut restoring = node("web-1", 100);
    restoring.restoring = Some(2);
    let r = signals(&reading(vec![node("web-0", 100), restoring]), 2, GIB);
    assert_eq!(hold(&r), Reason::Restoring);
    assert!(
        r.down
            .unwrap_err()
            .message
            .contains("node web-1 restores 2 cells")
    );

    let mut unreadable = node("web-1", 0);
    unreadable.error = Some("connection refused".into());
    let u = signals(&reading(vec![node("web-0", 100), unreadable]), 2, GIB);
    assert_eq!(hold(&u), Reason::StateUnreadable);

    let missing = signals(&reading(vec![node("web-0", 100)]), 2, GIB);
    assert_eq!(hold(&missing), Reason::StateUnreadable);

    let mut cramped = node("web-0", 100);
    cramped.memory_headroom = Some(false);
    assert_eq!(
        hold(&signals(
            &reading(vec![cramped, node("web-1", 100)]),
            2,
            GIB
        )),
        Reason::NoHeadroom
    );

    let no_budget = signals(
        &reading(vec![node("web-0", 100), node("web-1", 100)]),
        2,
        None,
    );
    assert_eq!(hold(&no_budget), Reason::NoMemoryBudget);

    let v04 = NodeCapacity {
        name: "web-0".into(),
        restoring: Some(0),
        rss_bytes: Some(1),
        ..NodeCapacity::default()
    };
    let old = signals(
        &reading(vec![
            v04.clone(),
            NodeCapacity {
                name: "web-1".into(),
                ..v04
            },
        ]),
        2,
        GIB,
    );
    assert_eq!(old.up, None, "no signal is never read as a signal");
    assert_eq!(hold(&old), Reason::SignalsUnsupported);

    assert_eq!(
        hold(&signals(&reading(vec![node("web-0", 1)]), 1, GIB)),
        Reason::AtMinimum
    );
}

#[test]
fn bytes_read_as_people_write_them() {
    assert_eq!(human_bytes(512), "512 B");
    assert_eq!(human_bytes(3 << 29), "1.5 GiB");
}
