//! What one reading of a fleet's nodes says to its autoscaler, by celld's rule ("Feed an
//! autoscaler"): add a node when one reports activations waiting for capacity or a pressured
//! lease; remove one only when every node was read, none restores cells, every survivor has
//! memory headroom, and the survivors' memory would hold the leaving node's. Pure.

use crate::capacity::reading::FleetReading;
use celld_api::reasons::Reason;
use celld_api::{CelldFleetSpec, NodeCapacity};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// Why a node cannot be removed now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    /// A word for it (status.autoscaling.holding.reason).
    pub reason: Reason,
    /// What holds it, with the node and numbers.
    pub message: String,
}

impl Hold {
    fn new(reason: Reason, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
        }
    }
}

/// What a reading says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signals {
    /// Nodes should be added: the signal (CapacityWaiting or Pressured) and its numbers.
    pub up: Option<(Reason, String)>,
    /// A node could be removed (with the numbers that say so), or what holds it.
    pub down: Result<String, Hold>,
}

/// The memory each node may use: its limit (or request) and the share the survivors may fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    /// Bytes of the nodes' memory limit, or request when no limit is set.
    pub per_node: u64,
    /// The share of it survivors may use, in percent.
    pub percent: i32,
}

impl MemoryBudget {
    /// The budget of a fleet's nodes: spec.resources' memory limit, or request when no limit is
    /// set, and spec.autoscaling's share; None without spec.autoscaling or a memory figure.
    pub fn of(spec: &CelldFleetSpec) -> Option<Self> {
        let autoscaling = spec.autoscaling.as_ref()?;
        let resources = spec.resources.as_ref()?;
        let memory = |map: Option<&std::collections::BTreeMap<String, Quantity>>| {
            map.and_then(|m| m.get("memory"))
                .and_then(|q| celld_api::quantity::bytes(&q.0))
        };
        let per_node = memory(resources.limits.as_ref()).or(memory(resources.requests.as_ref()))?;
        Some(Self {
            per_node,
            percent: autoscaling.scale_down.memory_utilization_percent,
        })
    }
}

/// What `reading` of a fleet running `replicas` nodes says, with the nodes' memory `budget`
/// (None when spec.resources sets no memory).
pub fn signals(reading: &FleetReading, replicas: i32, budget: Option<MemoryBudget>) -> Signals {
    Signals {
        up: up(reading),
        down: down(reading, replicas, budget),
    }
}

fn up(reading: &FleetReading) -> Option<(Reason, String)> {
    let waiting: Vec<&NodeCapacity> = reading
        .answered()
        .filter(|n| n.capacity_waiting.unwrap_or(0) > 0)
        .collect();
    if !waiting.is_empty() {
        let total: u64 = waiting.iter().filter_map(|n| n.capacity_waiting).sum();
        let each: Vec<String> = waiting
            .iter()
            .map(|n| format!("{} {}", n.name, n.capacity_waiting.unwrap_or(0)))
            .collect();
        return Some((
            Reason::CapacityWaiting,
            format!(
                "{total} activations wait for capacity on {} ({})",
                nodes_word(waiting.len()),
                each.join(", ")
            ),
        ));
    }
    let pressured: Vec<&str> = reading
        .answered()
        .filter(|n| n.pressured == Some(true))
        .map(|n| n.name.as_str())
        .collect();
    (!pressured.is_empty()).then(|| {
        (
            Reason::Pressured,
            format!(
                "{} under memory pressure: {}",
                nodes_word(pressured.len()),
                pressured.join(", ")
            ),
        )
    })
}

fn nodes_word(n: usize) -> String {
    if n == 1 {
        "1 node".into()
    } else {
        format!("{n} nodes")
    }
}

fn down(
    reading: &FleetReading,
    replicas: i32,
    budget: Option<MemoryBudget>,
) -> Result<String, Hold> {
    if let Some(n) = reading.nodes.iter().find(|n| n.error.is_some()) {
        return Err(Hold::new(
            Reason::StateUnreadable,
            format!(
                "the state of node {} could not be read ({}): a fleet is scaled in only on every node's reading",
                n.name,
                n.error.as_deref().unwrap_or_default()
            ),
        ));
    }
    let read = reading.nodes.len();
    if i32::try_from(read).ok() != Some(replicas) {
        return Err(Hold::new(
            Reason::StateUnreadable,
            format!(
                "{read} of {replicas} nodes were read: a fleet is scaled in only on every node's reading"
            ),
        ));
    }
    if let Some(field) = reading.unreported().first() {
        return Err(Hold::new(
            Reason::SignalsUnsupported,
            format!(
                "the nodes do not report {field} on GET /state (celld before v0.5.0): nothing says the survivors would hold a removed node's cells"
            ),
        ));
    }
    if let Some(n) = reading.nodes.iter().find(|n| n.restoring.unwrap_or(0) > 0) {
        return Err(Hold::new(
            Reason::Restoring,
            format!(
                "node {} restores {} cells: no node is removed while one restores",
                n.name,
                n.restoring.unwrap_or(0)
            ),
        ));
    }
    if let Some((_, why)) = up(reading) {
        return Err(Hold::new(Reason::NoHeadroom, why));
    }
    let Some((leaving, survivors)) = reading.nodes.split_last() else {
        return Err(Hold::new(Reason::AtMinimum, "the fleet runs no node"));
    };
    if survivors.is_empty() {
        return Err(Hold::new(Reason::AtMinimum, "the fleet runs one node"));
    }
    if let Some(n) = survivors.iter().find(|n| n.memory_headroom != Some(true)) {
        return Err(Hold::new(
            Reason::NoHeadroom,
            format!("node {} reports no memory headroom", n.name),
        ));
    }
    let Some(budget) = budget else {
        return Err(Hold::new(
            Reason::NoMemoryBudget,
            "spec.resources sets no memory limit or request: nothing says what the survivors can hold; set spec.resources.limits.memory",
        ));
    };
    let rss = |n: &NodeCapacity| n.rss_bytes.unwrap_or(0);
    let after: u64 = survivors.iter().map(rss).sum::<u64>() + rss(leaving);
    let room = u128::from(budget.per_node) * survivors.len() as u128 * budget.percent as u128 / 100;
    let words = format!(
        "the {} survivors would use {} of {} ({}% of {} each) once they hold {}'s {}",
        survivors.len(),
        human_bytes(after),
        human_bytes(u64::try_from(room).unwrap_or(u64::MAX)),
        budget.percent,
        human_bytes(budget.per_node),
        leaving.name,
        human_bytes(rss(leaving))
    );
    if u128::from(after) > room {
        return Err(Hold::new(Reason::NoHeadroom, words));
    }
    Ok(format!(
        "every node has memory headroom and none restores; {words}"
    ))
}

/// `n` bytes in the largest binary unit that keeps a whole part (`1.5 GiB`).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests;
