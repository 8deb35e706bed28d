//! `--waves 1,10%,100%`: how far each wave of the rollout goes, in order. A number counts
//! fleets and a percentage the selected fleets, both over the waves before included (so
//! `1,10%,100%` moves one fleet, then up to a tenth, then the rest), exactly as a CelldRollout's
//! spec.waves[].fleets.

use celld_api::rollout::MAX_WAVES;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// The most fleets a wave may count.
const MAX_COUNT: i32 = celld_api::rollout::MAX_FLEETS as i32;

/// `--waves` parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waves {
    /// The flag's value, as given.
    pub text: String,
    /// How far each wave goes: a count of fleets or a percentage (`10%`).
    pub sizes: Vec<IntOrString>,
}

/// How far one wave goes, from its entry in `--waves`.
fn size(entry: &str) -> Option<IntOrString> {
    let digits = |s: &str| !s.is_empty() && s.len() <= 4 && s.chars().all(|c| c.is_ascii_digit());
    match entry.strip_suffix('%') {
        Some(percent) if digits(percent) => percent
            .parse::<u32>()
            .ok()
            .filter(|p| (1..=100).contains(p))
            .map(|p| IntOrString::String(format!("{p}%"))),
        Some(_) => None,
        None if digits(entry) => entry
            .parse::<i32>()
            .ok()
            .filter(|n| (1..=MAX_COUNT).contains(n))
            .map(IntOrString::Int),
        None => None,
    }
}

/// Whether `later` goes no further than `earlier`, when both are counts or both percentages.
fn not_further(earlier: &IntOrString, later: &IntOrString) -> bool {
    let percent = |s: &str| s.trim_end_matches('%').parse::<u32>().unwrap_or(0);
    match (earlier, later) {
        (IntOrString::Int(a), IntOrString::Int(b)) => b <= a,
        (IntOrString::String(a), IntOrString::String(b)) => percent(b) <= percent(a),
        _ => false,
    }
}

fn written(size: &IntOrString) -> String {
    match size {
        IntOrString::Int(n) => n.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// Parses `--waves`: comma-separated counts (1 to 1000) and percentages (1% to 100%), at most
/// 20, each going further than the one before it of its kind.
pub fn parse(text: &str) -> Result<Waves, String> {
    let mut sizes: Vec<IntOrString> = Vec::new();
    for (i, entry) in text.split(',').map(str::trim).enumerate() {
        let Some(wave) = size(entry) else {
            return Err(format!(
                "'{entry}' (wave {}) is not a wave: give a number of fleets from 1 to {MAX_COUNT} or a percentage of the selected fleets from 1% to 100%, separated by commas, for example 1,10%,100%",
                i + 1
            ));
        };
        if let Some(earlier) = sizes.iter().rev().find(|e| not_further(e, &wave)) {
            return Err(format!(
                "wave {} ({}) goes no further than an earlier wave ({}): each wave counts the fleets of the waves before it too (1,10%,100% moves one fleet, then up to a tenth, then the rest), so make each count or percentage larger than the one before",
                i + 1,
                written(&wave),
                written(earlier)
            ));
        }
        sizes.push(wave);
    }
    if sizes.len() > MAX_WAVES {
        return Err(format!(
            "{} waves are too many: a rollout has at most {MAX_WAVES}",
            sizes.len()
        ));
    }
    Ok(Waves {
        text: text.to_string(),
        sizes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_percentages_in_order() {
        let w = parse("1, 10%,100%").unwrap();
        assert_eq!(
            w.sizes,
            [
                IntOrString::Int(1),
                IntOrString::String("10%".into()),
                IntOrString::String("100%".into())
            ]
        );
        assert_eq!(parse("1000").unwrap().sizes, [IntOrString::Int(1000)]);
        assert_eq!(
            parse("5,1%").unwrap().sizes.len(),
            2,
            "a count and a percentage are not compared"
        );
    }

    #[test]
    fn bad_values_are_refused_naming_the_wave() {
        for (bad, says) in [
            ("", "'' (wave 1) is not a wave"),
            ("1,,100%", "'' (wave 2) is not a wave"),
            ("0", "'0' (wave 1)"),
            ("1001", "'1001' (wave 1)"),
            ("0%", "'0%' (wave 1)"),
            ("101%", "'101%' (wave 1)"),
            ("1.5", "'1.5' (wave 1)"),
            ("-1", "'-1' (wave 1)"),
            ("10 %", "'10 %' (wave 1)"),
            ("ten", "'ten' (wave 1)"),
            ("1,1", "wave 2 (1) goes no further than an earlier wave (1)"),
            (
                "50%,10%",
                "wave 2 (10%) goes no further than an earlier wave (50%)",
            ),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
        let many = (1..=21)
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(",");
        insta::assert_snapshot!(parse(&many).unwrap_err(), @"21 waves are too many: a rollout has at most 20");
    }
}
