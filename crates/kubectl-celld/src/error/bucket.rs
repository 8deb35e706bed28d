//! What can go wrong with the fleet's bucket, each saying which key, where, and what to run.

/// A request to the fleet's bucket failed.
#[derive(Debug, thiserror::Error)]
#[error(
    "{action} {key} under {bucket} failed: {detail}; check the fleet's storage with: kubectl celld status {fleet} -n {namespace}"
)]
pub struct BucketFailure {
    /// What was being done (reading, listing, writing).
    pub action: &'static str,
    /// The key, relative to the fleet's prefix.
    pub key: String,
    /// `s3://bucket/prefix`.
    pub bucket: String,
    /// The fleet.
    pub fleet: String,
    /// Its namespace.
    pub namespace: String,
    /// What the server or curl said.
    pub detail: String,
}

/// A compare-and-swap write found the object changed by another writer.
#[derive(Debug, thiserror::Error)]
#[error(
    "another deploy or rollback changed {key} under {bucket} after it was read (the write expected {expected}), so it was not overwritten; see what is live now and re-run if still wanted: kubectl celld history {fleet} -n {namespace}"
)]
pub struct LostRace {
    /// The key, relative to the fleet's prefix.
    pub key: String,
    /// `s3://bucket/prefix`.
    pub bucket: String,
    /// What the write expected to find.
    pub expected: String,
    /// The fleet.
    pub fleet: String,
    /// Its namespace.
    pub namespace: String,
}
