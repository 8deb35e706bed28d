//! The pointer writes of `celld deploy` and `kubectl celld rollback`, on every store: a create
//! over an existing pointer and an overwrite on a stale version are lost races (`changed`, the
//! object untouched), a write on the version just read wins, and a read right after a write
//! sees it.

use crate::TestResult;
use crate::agent::{Agent, SCRIPT};
use crate::on_every_store;
use crate::stores::Store;
use celld_bucket::wire::{Answer, Expect, Version};
use celld_fixtures::pointer::pointer_json;

const FLEET_POINTER: &str = "deploy/current.json";
const SCRIPT_POINTER: &str = "deploy/web/current.json";

/// A first deploy creates the script's pointer, then the fleet's, each only if absent; a second
/// writer creating the fleet pointer loses (S3 and GCS answer 412, Azure 409), and the first
/// pointer stays.
fn a_first_deploy_creates_each_pointer_once(store: Store) -> TestResult {
    let agent = Agent::on(store, "agent-create")?;
    if let Some((body, _)) = agent.get(FLEET_POINTER)? {
        return Err(format!("a fresh prefix already holds {FLEET_POINTER}: {body}").into());
    }
    let first = pointer_json(SCRIPT, "0000000000000001")?;
    for key in [SCRIPT_POINTER, FLEET_POINTER] {
        agent.put_expecting(key, &first, &Expect::Absent, &Answer::Written)?;
        agent.assert_body(key, &first)?;
    }
    let second = pointer_json(SCRIPT, "0000000000000002")?;
    agent.put_expecting(FLEET_POINTER, &second, &Expect::Absent, &Answer::Changed)?;
    agent.assert_body(FLEET_POINTER, &first)
}

/// A rollback writes on the version it read: when a deploy moved the pointer in between, its
/// write loses and the deploy's pointer stays; run again, it reads the new version and wins,
/// and that version is stale from then on.
fn a_rollback_loses_to_a_deploy_that_moved_the_pointer(store: Store) -> TestResult {
    let agent = Agent::on(store, "agent-cas")?;
    let live = pointer_json(SCRIPT, "000000000000000a")?;
    agent.put_expecting(FLEET_POINTER, &live, &Expect::Absent, &Answer::Written)?;
    let (_, read_by_rollback) = agent.read(FLEET_POINTER)?;

    let deployed = pointer_json(SCRIPT, "000000000000000b")?;
    agent.put_expecting(
        FLEET_POINTER,
        &deployed,
        &read_by_rollback,
        &Answer::Written,
    )?;
    let rolled_back = pointer_json(SCRIPT, "0000000000000009")?;
    agent.put_expecting(
        FLEET_POINTER,
        &rolled_back,
        &read_by_rollback,
        &Answer::Changed,
    )?;
    agent.assert_body(FLEET_POINTER, &deployed)?;

    let (_, fresh) = agent.read(FLEET_POINTER)?;
    if fresh == read_by_rollback {
        return Err(format!("{store} kept the version {fresh} across an overwrite").into());
    }
    agent.put_expecting(FLEET_POINTER, &rolled_back, &fresh, &Answer::Written)?;
    agent.assert_body(FLEET_POINTER, &rolled_back)?;
    agent.put_expecting(FLEET_POINTER, &live, &fresh, &Answer::Changed)?;
    agent.assert_body(FLEET_POINTER, &rolled_back)
}

/// A pointer deleted between the read and the write: the overwrite loses and creates nothing.
fn an_overwrite_of_a_vanished_pointer_is_a_lost_race(store: Store) -> TestResult {
    let agent = Agent::on(store, "agent-vanished")?;
    let version = match store {
        Store::Gcs => Version::Generation("1".into()),
        Store::S3 | Store::Azure => Version::ETag("\"0123456789abcdef\"".into()),
    };
    let body = pointer_json(SCRIPT, "000000000000000c")?;
    agent.put_expecting(
        SCRIPT_POINTER,
        &body,
        &Expect::Version(version),
        &Answer::Changed,
    )?;
    match agent.get(SCRIPT_POINTER)? {
        None => Ok(()),
        Some((body, _)) => Err(format!("the lost write created {SCRIPT_POINTER}: {body}").into()),
    }
}

/// A version of the other kind (an ETag for GCS, a generation for S3 and Azure) is refused
/// with exit code 1 and a message, never sent.
fn a_version_of_another_kind_is_refused(store: Store) -> TestResult {
    let agent = Agent::on(store, "agent-kind")?;
    let body = pointer_json(SCRIPT, "000000000000000d")?;
    agent.put_expecting(SCRIPT_POINTER, &body, &Expect::Absent, &Answer::Written)?;
    let other = match store {
        Store::Gcs => Version::ETag("\"abc\"".into()),
        Store::S3 | Store::Azure => Version::Generation("1".into()),
    };
    match agent.put(
        SCRIPT_POINTER,
        &pointer_json(SCRIPT, "000000000000000e")?,
        &Expect::Version(other),
    )? {
        Answer::Failed { error } if error.contains("expects") => {
            agent.assert_body(SCRIPT_POINTER, &body)
        }
        answer => Err(format!("answered {}, expected a refusal", answer.to_line()).into()),
    }
}

/// Rewriting a pointer with the same bytes: GCS (new generation) and Azure (new ETag) make the
/// earlier version stale; S3's ETag is the content's MD5, so the earlier ETag still matches
/// (on AWS S3 too, for a single-part upload). A pointer names its version, so the same bytes
/// mean the same target: a write that goes through then changes nothing.
fn rewriting_the_same_bytes(store: Store) -> TestResult {
    let agent = Agent::on(store, "agent-same-bytes")?;
    let body = pointer_json(SCRIPT, "000000000000000f")?;
    agent.put_expecting(FLEET_POINTER, &body, &Expect::Absent, &Answer::Written)?;
    let (_, before) = agent.read(FLEET_POINTER)?;
    agent.put_expecting(FLEET_POINTER, &body, &before, &Answer::Written)?;
    let again = match store {
        Store::S3 => Answer::Written,
        Store::Gcs | Store::Azure => Answer::Changed,
    };
    agent.put_expecting(FLEET_POINTER, &body, &before, &again)
}

on_every_store!(
    a_first_deploy_creates_each_pointer_once,
    a_rollback_loses_to_a_deploy_that_moved_the_pointer,
    an_overwrite_of_a_vanished_pointer_is_a_lost_race,
    a_version_of_another_kind_is_refused,
    rewriting_the_same_bytes,
);
