//! `history`'s text: a table of the versions, newest first, the live one starred.

use crate::bucket::versions::History;
use crate::text::human;
use crate::text::table::Table;

/// The text output at `now`.
pub fn render(history: &History, now: jiff::Timestamp) -> String {
    let mut out = format!(
        "Fleet {}/{}: {}\n",
        history.namespace, history.fleet, history.bucket
    );
    match &history.current {
        Some(c) => out.push_str(&format!(
            "Current: version {}{}\n",
            c.version,
            c.script
                .as_deref()
                .map(|s| format!(" (script {s})"))
                .unwrap_or_default()
        )),
        None => out
            .push_str("Current: none (deploy/current.json does not exist: nothing deployed yet)\n"),
    }
    if history.versions.is_empty() {
        out.push_str("No versions published under deploy/ yet\n");
        return out;
    }
    let mut table = Table::new(&[
        "", "VERSION", "SCRIPT", "MODULES", "SIZE", "UPLOADED", "AGE", "NOTE",
    ]);
    for v in &history.versions {
        let time = v.uploaded.as_deref().and_then(|t| t.parse().ok());
        table.row(vec![
            if v.current { "*" } else { "" }.to_string(),
            v.version.clone(),
            v.script.clone(),
            v.modules.to_string(),
            human::bytes(v.size),
            v.uploaded.clone().unwrap_or_else(|| "-".into()),
            human::age(time, now),
            v.problem.clone().unwrap_or_default(),
        ]);
    }
    out.push('\n');
    out.push_str(&table.render(""));
    out
}
