//! Which fleets each wave takes, from the selected fleets in order: a count or a percentage
//! counts over all of them, earlier waves included; a selector takes the matching fleets no
//! earlier wave took; a wave with neither takes every fleet left. Pure: the operator and
//! `kubectl celld deploy --dry-run` decide alike.

use super::Wave;
use super::selection::{Selection, selects};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// How far a wave of `fleets` goes over `total` fleets: a number as is (written as a number or
/// a string of digits, both of which admission takes), a percentage rounded up; None for a
/// value admission refuses.
pub fn reach(fleets: &IntOrString, total: usize) -> Option<usize> {
    match fleets {
        IntOrString::Int(n) => usize::try_from(*n).ok().filter(|n| *n >= 1),
        IntOrString::String(text) => match text.strip_suffix('%') {
            Some(percent) => {
                let percent: usize = percent.parse().ok()?;
                (1..=100)
                    .contains(&percent)
                    .then(|| (total * percent).div_ceil(100))
            }
            None => text.parse().ok().filter(|n| *n >= 1),
        },
    }
}

/// The fleets of each wave (by name, in the selection's order) and those no wave takes.
pub fn plan(waves: &[Wave], selection: &Selection) -> (Vec<Vec<String>>, Vec<String>) {
    let total = selection.fleets.len();
    let mut taken = vec![false; total];
    let mut count = 0;
    let mut planned = Vec::with_capacity(waves.len());
    for wave in waves {
        let wanted: Vec<usize> = match (&wave.fleets, &wave.selector) {
            (_, Some(selector)) => (0..total)
                .filter(|i| !taken[*i] && selects(selector, &selection.labels[*i]))
                .collect(),
            (fleets, None) => {
                let until = fleets
                    .as_ref()
                    .map_or(Some(total), |f| reach(f, total))
                    .unwrap_or(0)
                    .min(total);
                (0..total)
                    .filter(|i| !taken[*i])
                    .take(until.saturating_sub(count))
                    .collect()
            }
        };
        for &i in &wanted {
            taken[i] = true;
        }
        count += wanted.len();
        planned.push(
            wanted
                .into_iter()
                .map(|i| selection.fleets[i].clone())
                .collect(),
        );
    }
    let left = (0..total)
        .filter(|i| !taken[*i])
        .map(|i| selection.fleets[i].clone())
        .collect();
    (planned, left)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn selection(n: usize) -> Selection {
        Selection {
            fleets: (0..n).map(|i| format!("f{i:03}")).collect(),
            labels: (0..n)
                .map(|i| {
                    BTreeMap::from([(
                        "ring".to_string(),
                        if i % 10 == 7 { "canary" } else { "main" }.to_string(),
                    )])
                })
                .collect(),
            skipped: Vec::new(),
        }
    }

    fn wave(value: serde_json::Value) -> Wave {
        serde_json::from_value(value).unwrap()
    }

    fn sizes(waves: &[Wave], n: usize) -> Vec<usize> {
        plan(waves, &selection(n)).0.iter().map(Vec::len).collect()
    }

    #[test]
    fn counts_and_percentages_count_over_every_selected_fleet() {
        let waves = [
            wave(serde_json::json!({"fleets": 1})),
            wave(serde_json::json!({"fleets": "10%"})),
            wave(serde_json::json!({"fleets": "100%"})),
        ];
        assert_eq!(sizes(&waves, 200), [1, 19, 180]);
        assert_eq!(sizes(&waves, 5), [1, 0, 4], "10% of 5 rounds up to 1");
        assert_eq!(sizes(&waves, 0), [0, 0, 0]);
        let (planned, left) = plan(&waves[..2], &selection(30));
        assert_eq!(planned[0], ["f000"]);
        assert_eq!(planned[1], ["f001", "f002"]);
        assert_eq!(left.len(), 27, "no wave takes the rest");
    }

    #[test]
    fn a_selector_wave_takes_its_fleets_first_and_the_rest_follow_in_order() {
        let waves = [
            wave(serde_json::json!({"selector": {"matchLabels": {"ring": "canary"}}})),
            wave(serde_json::json!({"fleets": "50%"})),
            wave(serde_json::json!({})),
        ];
        let (planned, left) = plan(&waves, &selection(20));
        assert_eq!(planned[0], ["f007", "f017"]);
        assert_eq!(
            planned[1].len(),
            8,
            "up to half of 20, the canaries included"
        );
        assert_eq!(planned[1][0], "f000");
        assert_eq!(planned[2].len(), 10);
        assert!(left.is_empty());
    }

    #[test]
    fn reach_of_values_admission_refuses_is_none() {
        assert_eq!(reach(&IntOrString::String("0%".into()), 10), None);
        assert_eq!(reach(&IntOrString::String("x".into()), 10), None);
        assert_eq!(reach(&IntOrString::Int(0), 10), None);
        assert_eq!(reach(&IntOrString::String("33%".into()), 10), Some(4));
        assert_eq!(
            reach(&IntOrString::String("5".into()), 10),
            Some(5),
            "a count written as a string, as admission takes it"
        );
    }
}
