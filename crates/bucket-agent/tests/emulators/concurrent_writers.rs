//! Eight agents writing one pointer at once, each expecting what it read: exactly one wins, on
//! the stores whose conditional writes are atomic (fake-gcs-server, Azurite). s3s-fs checks a
//! condition, then writes: two concurrent writers can both win there (testenv/README.md), so it
//! is not tested; AWS S3 and R2 decide atomically.

use crate::TestResult;
use crate::agent::{Agent, SCRIPT};
use crate::stores::Store;
use celld_bucket::wire::{Answer, Expect};
use celld_fixtures::pointer::pointer_json;
use std::thread;

const WRITERS: usize = 8;
const KEY: &str = "deploy/current.json";

/// Runs `WRITERS` writes of `KEY` at once, each expecting `expect`; the body of the one that
/// won, failing unless exactly one did and the others lost the race.
fn race(agent: &Agent, expect: &Expect, round: &str) -> TestResult<String> {
    let bodies = (0..WRITERS)
        .map(|i| pointer_json(SCRIPT, &format!("{round}{i:015x}")))
        .collect::<Result<Vec<_>, _>>()?;
    let answers: Vec<(String, Result<Answer, String>)> = thread::scope(|scope| {
        let writers: Vec<_> = bodies
            .into_iter()
            .map(|body| {
                scope.spawn(move || {
                    let answer = agent.put(KEY, &body, expect).map_err(|e| e.to_string());
                    (body, answer)
                })
            })
            .collect();
        writers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| (String::new(), Err("a writer panicked".to_string())))
            })
            .collect()
    });
    let mut winners = Vec::new();
    for (body, answer) in answers {
        match answer? {
            Answer::Written => winners.push(body),
            Answer::Changed => {}
            other => return Err(format!("a writer got {}", other.to_line()).into()),
        }
    }
    match winners.as_slice() {
        [winner] => Ok(winner.clone()),
        _ => Err(format!(
            "{} of {WRITERS} concurrent writers expecting {expect} won on {}, expected exactly one",
            winners.len(),
            agent.store
        )
        .into()),
    }
}

fn one_concurrent_writer_wins(store: Store) -> TestResult {
    let agent = Agent::on(store, "agent-race")?;
    let created = race(&agent, &Expect::Absent, "1")?;
    let (body, version) = agent.read(KEY)?;
    if body != created {
        return Err(format!("{KEY} holds {body}, not the winning create {created}").into());
    }
    let swapped = race(&agent, &version, "2")?;
    agent.assert_body(KEY, &swapped)
}

#[test]
fn gcs_lets_exactly_one_of_eight_concurrent_writers_win() -> TestResult {
    one_concurrent_writer_wins(Store::Gcs)
}

#[test]
fn azure_lets_exactly_one_of_eight_concurrent_writers_win() -> TestResult {
    one_concurrent_writer_wins(Store::Azure)
}
