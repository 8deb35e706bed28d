//! `list`, as `kubectl celld history` uses it: every object written under the fleet's prefix,
//! keys relative to it, with their sizes; nothing of a neighbouring prefix.

use crate::TestResult;
use crate::agent::{Agent, SCRIPT};
use crate::on_every_store;
use crate::stores::Store;
use celld_bucket::wire::{Answer, Expect};
use celld_fixtures::pointer::pointer_json;

/// What `celld deploy` writes for one version, then its pointers.
fn published(version: &str) -> TestResult<Vec<(String, String)>> {
    let pointer = pointer_json(SCRIPT, version)?;
    Ok(vec![
        (
            format!("deploy/web/{version}/index.js"),
            "export default {}".to_string(),
        ),
        (
            format!("deploy/web/{version}/manifest.json"),
            format!(r#"{{"version":"{version}","script_name":"web","modules":["index.js"]}}"#),
        ),
        ("deploy/web/current.json".to_string(), pointer.clone()),
        ("deploy/current.json".to_string(), pointer),
    ])
}

fn listing_returns_what_was_written(store: Store) -> TestResult {
    let agent = Agent::on(store, "agent-list")?;
    let neighbour = agent.with_bucket(&format!("{}-neighbour", agent.bucket));
    let mut written = published("0000000000000011")?;
    for (key, body) in &written {
        agent.put_expecting(key, body, &Expect::Absent, &Answer::Written)?;
    }
    neighbour.put_expecting(
        "deploy/current.json",
        "{}",
        &Expect::Absent,
        &Answer::Written,
    )?;

    let Answer::Listing { objects } = agent.run(&["list", "deploy/"])? else {
        return Err(format!("list deploy/ on {store} gave no listing").into());
    };
    let mut listed: Vec<(String, u64)> = objects.into_iter().map(|o| (o.key, o.size)).collect();
    listed.sort();
    written.sort();
    let expected: Vec<(String, u64)> = written
        .iter()
        .map(|(key, body)| (key.clone(), body.len() as u64))
        .collect();
    if listed != expected {
        return Err(format!("list deploy/ on {store}: {listed:?}, expected {expected:?}").into());
    }
    match agent.run(&["list", "nothing/"])? {
        Answer::Listing { objects } if objects.is_empty() => Ok(()),
        answer => Err(format!("list nothing/ on {store}: {}", answer.to_line()).into()),
    }
}

on_every_store!(listing_returns_what_was_written);
