//! What every node serves: the Adopted condition, status.nodes and deployment.adopted.

use super::*;

/// The reading of two nodes: web-0 on the deployed version, web-1 refusing it.
fn one_refusal() -> crate::nodes::adoption::Reading {
    use crate::nodes::adoption::{Answer, Reading};
    use celld_api::contract::node_api::NodeState;
    use celld_api::contract::node_api::{NodeDeployment, Reload};
    let state = |version: &str| NodeState {
        restoring: 1,
        deployment: Some(NodeDeployment {
            version: Some(version.into()),
            swapping: false,
        }),
        ..NodeState::default()
    };
    Reading {
        version: "0123456789abcdef".into(),
        nodes: vec![
            (
                "app-0".into(),
                Answer::State(state("0123456789abcdef"), None),
            ),
            (
                "app-1".into(),
                Answer::State(
                    state("00000000000000a1"),
                    Some(Reload::Refused("module digest mismatch".into())),
                ),
            ),
        ],
    }
}

#[test]
fn a_refused_version_names_the_node_and_keeps_the_pointer() {
    let (st, p, s, reading) = (storage(), deployed(), sts(2), one_refusal());
    let o_observation = Observation {
        storage: ObservedStorage::Resolved(st.clone(), p.clone()),
        route: Route::None,
        url: None,
        nodes: Some(Arc::new(reading.clone())),
        deployed_at: Some("2026-12-02T10:00:00Z".into()),
        ..at_rest()
    };
    let o = o_observation.observed("app", Some(&s));
    let status = compute(None, &o, Timestamp::UNIX_EPOCH);
    let adopted = get(&status, celld_api::conditions::ADOPTED);
    assert_eq!(
        (adopted.status.as_str(), adopted.reason.as_str()),
        ("False", "VersionRefused")
    );
    assert!(
        adopted.message.contains("app-1")
            && adopted.message.contains("module digest mismatch")
            && adopted.message.contains("1/2"),
        "{}",
        adopted.message
    );
    let deployment = status.deployment.clone().unwrap();
    assert_eq!(
        (deployment.version.as_str(), deployment.adopted.as_deref()),
        ("0123456789abcdef", Some("1/2"))
    );
    assert_eq!(
        deployment.observed_deployed_at.as_deref(),
        Some("2026-12-02T10:00:00Z"),
        "the deploy this reading answers"
    );
    assert_eq!(status.nodes.len(), 2);
    assert_eq!(status.nodes[1].adoption, celld_api::Adoption::Refused);
    assert_eq!(status.nodes[1].version.as_deref(), Some("00000000000000a1"));
    assert_eq!(
        get(&status, READY).status,
        "True",
        "a refusal leaves the nodes serving"
    );
    assert_eq!(kstatus(&status)[1], ("True", "VersionRefused"));

    // The bucket unreadable next: the nodes last read stay, the condition is Unknown.
    let unknown = Pointer::Unknown("timeout".into());
    let later_observation = Observation {
        storage: ObservedStorage::Resolved(st.clone(), unknown.clone()),
        nodes: None,
        deployed_at: None,
        source: None,
        ..o_observation.clone()
    };
    let later = later_observation.observed(o.name, o.statefulset);
    let kept = compute(Some(&status), &later, Timestamp::UNIX_EPOCH);
    assert_eq!(get(&kept, celld_api::conditions::ADOPTED).status, "Unknown");
    assert_eq!(kept.nodes, status.nodes);
    assert_eq!(
        kept.deployment.and_then(|d| d.adopted).as_deref(),
        Some("1/2")
    );

    // A new version whose nodes are not read yet: the nodes stay listed, but N/M of the old
    // version is not shown as the new one's.
    let next = Pointer::Deployed(DeploymentStatus {
        version: "00000000000000c3".into(),
        ..DeploymentStatus::default()
    });
    let unread_observation = Observation {
        storage: ObservedStorage::Resolved(st.clone(), next.clone()),
        nodes: None,
        ..o_observation.clone()
    };
    let unread = unread_observation.observed(o.name, o.statefulset);
    let status = compute(Some(&status), &unread, Timestamp::UNIX_EPOCH);
    assert_eq!(
        get(&status, celld_api::conditions::ADOPTED).reason,
        "NodeStateUnreadable"
    );
    assert_eq!(status.nodes.len(), 2);
    assert_eq!(status.deployment.and_then(|d| d.adopted), None);
}

#[test]
fn nodes_the_operator_cannot_reach_are_said_so_in_words_that_do_not_change() {
    use crate::nodes::adoption::{Answer, Reading};
    use crate::nodes::unanswered::Unanswered;
    let (st, p, s) = (storage(), deployed(), sts(2));
    let unreachable = Reading {
        version: "0123456789abcdef".into(),
        nodes: ["app-0", "app-1"]
            .into_iter()
            .map(|pod| (pod.to_string(), Answer::Unreadable(Unanswered::Unreachable)))
            .collect(),
    };
    let observation = Observation {
        storage: ObservedStorage::Resolved(st, p),
        route: Route::None,
        url: None,
        nodes: Some(Arc::new(unreachable.clone())),
        ..at_rest()
    };
    let o = observation.observed("app", Some(&s));
    let status = compute(None, &o, Timestamp::UNIX_EPOCH);
    let adopted = get(&status, celld_api::conditions::ADOPTED);
    assert_eq!(
        (adopted.status.as_str(), adopted.reason.as_str()),
        ("Unknown", "NodeStateUnreadable")
    );
    assert!(
        adopted
            .message
            .contains("app-0 (the operator cannot reach its node API)")
            && adopted.message.contains("--node-api-connect-to")
            && adopted.message.contains("port 8081"),
        "{}",
        adopted.message
    );
    assert_eq!(
        status.nodes[1].message.as_deref(),
        Some("the operator cannot reach its node API")
    );
    assert_eq!(
        get(&status, READY).status,
        "True",
        "the nodes serve all the same"
    );

    // Read again, the same cause: the same status, nothing to write.
    let again_observation = Observation {
        nodes: Some(Arc::new(unreachable)),
        ..observation.clone()
    };
    let again = compute(
        Some(&status),
        &again_observation.observed("app", Some(&s)),
        Timestamp::UNIX_EPOCH,
    );
    assert_eq!(again, status);
}
