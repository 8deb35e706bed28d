//! The report's title and the line that says how the run was invoked: the bench's own
//! arguments as given, the `make bench` line that passes them, and whether the fake nodes were
//! given or calibrated.

use super::format::thousands;
use crate::results::{Nodes, Results};
use crate::settings::fake_nodes;

/// What `make bench` passes the bench when neither `FLEETS` nor `BENCH_FLEETS` is set.
const MAKE_DEFAULT: [&str; 3] = ["100", "300", "1000"];

/// The report's title, and the start of its first paragraph: how the run was invoked, up to the
/// full stop.
pub fn header(r: &Results) -> String {
    let title = match (r.single, r.rollout_alone) {
        (Some(n), _) => format!("celld-operator at {} fleets", thousands(n as u64)),
        (None, Some(n)) => format!(
            "celld-operator: a rollout over {} fleets",
            thousands(n as u64)
        ),
        (None, None) => "celld-operator at scale".to_string(),
    };
    let command = command(&r.invocation);
    let what = match (r.single, &r.nodes) {
        (Some(_), Some(nodes)) => format!(": one fleet count alone, {}", on(nodes)),
        (Some(_), None) => ": one fleet count alone".to_string(),
        (None, Some(nodes)) => format!(": every fleet count {}", on(nodes)),
        (None, None) => String::new(),
    };
    format!("# {title}\n\nWritten by {command}{what}.")
}

/// The bench's command line, and the `make bench` line that runs it when there is one.
fn command(args: &[String]) -> String {
    let bench = std::iter::once("celld-bench".to_string())
        .chain(args.iter().map(|a| shell_word(a)))
        .collect::<Vec<_>>()
        .join(" ");
    match make_line(args) {
        Some(make) => format!("`{bench}` (as `{make}` runs it)"),
        None => format!("`{bench}`"),
    }
}

/// Where the fake nodes came from.
fn on(nodes: &Nodes) -> String {
    match nodes {
        Nodes::Given(n) => format!("on {} as `--nodes` asked (not calibrated)", fake_nodes(*n)),
        Nodes::Calibrated(c) => {
            format!("on {} the calibration chose (below)", fake_nodes(c.nodes()))
        }
    }
}

/// The `make bench` line that passes the bench exactly `args`, if one does: the Makefile puts
/// `FLEETS` after `--single`, else passes `BENCH_FLEETS` (100 300 1000 unless set). None for no
/// arguments, or for one the shell would need quoted inside a make variable.
pub fn make_line(args: &[String]) -> Option<String> {
    if args.is_empty() || args.iter().any(|a| shell_word(a) != *a) {
        return None;
    }
    if args.iter().map(String::as_str).eq(MAKE_DEFAULT) {
        return Some("make bench".into());
    }
    let (variable, words) = match args {
        [single, rest @ ..] if single == "--single" && !rest.is_empty() => ("FLEETS", rest),
        _ => ("BENCH_FLEETS", args),
    };
    let value = words.join(" ");
    Some(if words.len() > 1 {
        format!("make bench {variable}=\"{value}\"")
    } else {
        format!("make bench {variable}={value}")
    })
}

/// `arg` as a shell would need it: as it is when it has only characters the shell leaves
/// alone, else in single quotes.
fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_count_alone_is_the_make_line_s_fleets() {
        assert_eq!(
            make_line(&args("--single 10000 --nodes 25")).as_deref(),
            Some("make bench FLEETS=\"10000 --nodes 25\"")
        );
        assert_eq!(
            make_line(&args("--single 10000")).as_deref(),
            Some("make bench FLEETS=10000")
        );
    }

    #[test]
    fn the_default_counts_are_make_bench_and_others_its_bench_fleets() {
        assert_eq!(
            make_line(&args("100 300 1000")).as_deref(),
            Some("make bench")
        );
        assert_eq!(
            make_line(&args("100 --churn-fleets 0")).as_deref(),
            Some("make bench BENCH_FLEETS=\"100 --churn-fleets 0\"")
        );
        // --single anywhere but first is not what FLEETS gives, but BENCH_FLEETS passes it.
        assert_eq!(
            make_line(&args("--nodes 25 --single 10000")).as_deref(),
            Some("make bench BENCH_FLEETS=\"--nodes 25 --single 10000\"")
        );
    }

    #[test]
    fn no_make_line_for_no_arguments_or_one_that_needs_quotes() {
        assert_eq!(make_line(&[]), None);
        let spaced = vec!["--out".to_string(), "my reports".to_string()];
        assert_eq!(make_line(&spaced), None);
        assert_eq!(command(&spaced), "`celld-bench --out 'my reports'`");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
