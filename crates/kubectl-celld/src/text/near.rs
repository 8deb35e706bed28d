//! "Did you mean" suggestions: names close to a mistyped one.

/// Up to three of `candidates` close to `wanted`, closest first: within an edit distance of a
/// third of the name (at least 2), or sharing a prefix or containment with it.
pub fn names<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let limit = (wanted.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter(|c| *c != wanted)
        .filter_map(|c| {
            let d = strsim::levenshtein(wanted, c);
            let related = wanted.len() >= 3 && (c.contains(wanted) || wanted.contains(c));
            (d <= limit || related).then_some((d, c))
        })
        .collect();
    scored.sort();
    scored.dedup();
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::names;

    #[test]
    fn suggests_close_names_closest_first() {
        let fleets = ["demo-app", "demo-api", "billing", "web"];
        assert_eq!(names("demo-ap", fleets), vec!["demo-api", "demo-app"]);
        assert_eq!(names("biling", fleets), vec!["billing"]);
        assert_eq!(names("we", fleets), vec!["web"]);
        assert!(names("zzzzzz", fleets).is_empty());
        assert_eq!(names("demo", fleets), vec!["demo-api", "demo-app"]);
    }
}
