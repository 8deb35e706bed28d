//! The fleets' capacity as Prometheus gauges, labelled by namespace and fleet (one series per
//! fleet and gauge, never per node or cell), encoded from the [store](CapacityStore) on each
//! scrape: a deleted fleet's series go with it.

use crate::capacity::store::{CapacityStore, Tracked};
use celld_api::CapacityTotals;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::gauge::ConstGauge;
use std::sync::Arc;

/// One gauge per fleet: its name (after the registry's prefix), help and value.
struct Gauge {
    name: &'static str,
    help: &'static str,
    value: fn(&Tracked, &CapacityTotals) -> Option<f64>,
}

fn count(v: Option<u64>) -> Option<f64> {
    v.map(|v| v as f64)
}

const GAUGES: [Gauge; 13] = [
    Gauge {
        name: "fleet_capacity_waiting",
        help: "Activations queued behind the residency cap on the fleet's nodes (celld's capacity_waiting, summed): more than 0 means add a node",
        value: |_, t| count(t.capacity_waiting),
    },
    Gauge {
        name: "fleet_activation_waiting",
        help: "Cold activations waiting for a permit on the fleet's nodes (summed)",
        value: |_, t| count(t.activation_waiting),
    },
    Gauge {
        name: "fleet_restoring",
        help: "Cells the fleet's nodes are restoring (summed)",
        value: |_, t| count(t.restoring),
    },
    Gauge {
        name: "fleet_owned_cells",
        help: "Cells the fleet's nodes own, dormant ones included (summed)",
        value: |_, t| count(t.owned_cells),
    },
    Gauge {
        name: "fleet_resident_cells",
        help: "Cells resident in the memory of the fleet's nodes (summed)",
        value: |_, t| count(t.resident_cells),
    },
    Gauge {
        name: "fleet_rss_bytes",
        help: "Resident memory of the fleet's nodes, bytes (summed)",
        value: |_, t| count(t.rss_bytes),
    },
    Gauge {
        name: "fleet_nodes_read",
        help: "Nodes of the fleet whose GET /state answered at the last reading",
        value: |_, t| Some(f64::from(t.nodes_read)),
    },
    Gauge {
        name: "fleet_nodes_unreadable",
        help: "Nodes of the fleet whose GET /state could not be read at the last reading",
        value: |_, t| Some(f64::from(t.nodes_unreadable)),
    },
    Gauge {
        name: "fleet_nodes_pressured",
        help: "Nodes of the fleet whose lease says pressured: a signal to add a node",
        value: |_, t| Some(f64::from(t.pressured_nodes)),
    },
    Gauge {
        name: "fleet_nodes_without_headroom",
        help: "Nodes of the fleet that report no memory headroom: no node should be removed",
        value: |_, t| Some(f64::from(t.nodes_without_headroom)),
    },
    Gauge {
        name: "fleet_capacity_read_timestamp_seconds",
        help: "When the fleet's nodes were last read, seconds since the Unix epoch",
        value: |f, _| Some(f.reading.read_at.as_millisecond() as f64 / 1000.0),
    },
    Gauge {
        name: "fleet_scale_paused",
        help: "1 while a rollout, a celld upgrade, a Worker adoption or a publish is under way or a node restores cells: spec.autoscaling removes no node then, and an external autoscaler should not either",
        value: |f, _| Some(f64::from(u8::from(f.paused))),
    },
    Gauge {
        name: "fleet_autoscaler_desired_replicas",
        help: "The nodes spec.autoscaling wants for the fleet (fleets with spec.autoscaling only)",
        value: |f, _| f.desired.map(f64::from),
    },
];

/// One fleet's series: its labels, what is tracked of it and its sums.
type Series = (Vec<(String, String)>, Tracked, CapacityTotals);

/// The collector of the capacity gauges.
#[derive(Debug)]
pub struct Exported(pub Arc<CapacityStore>);

impl Collector for Exported {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let mut fleets: Vec<Series> = Vec::new();
        self.0.each(|t| {
            let labels = vec![
                ("namespace".to_string(), t.namespace.clone()),
                ("fleet".to_string(), t.name.clone()),
            ];
            fleets.push((labels, t.clone(), t.reading.totals()));
        });
        fleets.sort_by(|a, b| a.0.cmp(&b.0));
        for gauge in &GAUGES {
            let mut family =
                encoder.encode_descriptor(gauge.name, gauge.help, None, MetricType::Gauge)?;
            for (labels, tracked, totals) in &fleets {
                if let Some(value) = (gauge.value)(tracked, totals) {
                    ConstGauge::new(value).encode(family.encode_family(labels)?)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::reading::FleetReading;
    use crate::capacity::store::FleetRef;
    use celld_api::NodeCapacity;
    use k8s_openapi::jiff::Timestamp;
    use prometheus_client::registry::Registry;

    #[test]
    fn exports_one_series_per_fleet_and_only_what_the_nodes_report() {
        let store = Arc::new(CapacityStore::default());
        let fleet = FleetRef {
            uid: "u",
            namespace: "shop",
            name: "web",
        };
        let reading = FleetReading {
            read_at: Timestamp::from_second(1_700_000_000).unwrap(),
            nodes: vec![
                NodeCapacity {
                    name: "web-0".into(),
                    capacity_waiting: Some(3),
                    pressured: Some(true),
                    memory_headroom: Some(false),
                    restoring: Some(0),
                    ..NodeCapacity::default()
                },
                NodeCapacity {
                    name: "web-1".into(),
                    capacity_waiting: Some(2),
                    restoring: Some(1),
                    ..NodeCapacity::default()
                },
            ],
        };
        store.record(fleet, reading, std::time::Instant::now(), None);
        store.decided("u", true, Some(4));
        let mut registry = Registry::with_prefix("celld_operator");
        registry.register_collector(Box::new(Exported(store)));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for line in [
            r#"celld_operator_fleet_capacity_waiting{namespace="shop",fleet="web"} 5"#,
            r#"celld_operator_fleet_restoring{namespace="shop",fleet="web"} 1"#,
            r#"celld_operator_fleet_nodes_pressured{namespace="shop",fleet="web"} 1"#,
            r#"celld_operator_fleet_nodes_without_headroom{namespace="shop",fleet="web"} 1"#,
            r#"celld_operator_fleet_capacity_read_timestamp_seconds{namespace="shop",fleet="web"} 1700000000.0"#,
            r#"celld_operator_fleet_scale_paused{namespace="shop",fleet="web"} 1"#,
            r#"celld_operator_fleet_autoscaler_desired_replicas{namespace="shop",fleet="web"} 4"#,
            "# TYPE celld_operator_fleet_rss_bytes gauge",
        ] {
            assert!(text.contains(line), "{line} in:\n{text}");
        }
        assert!(
            !text.contains("celld_operator_fleet_rss_bytes{"),
            "no node reports rss: no series, never 0:\n{text}"
        );
    }
}
