//! Buckets and credentials: the deployment [`pointer`](mod@pointer) and its reads, the manifest
//! of the version it names and its reads, the object store clients shared by fleets, the
//! operator's own cloud identity, the contents of credentials Secrets, and a fleet's storage
//! resolved with them.

pub mod ambient_credentials;
pub mod bucket_clients;
pub mod credentials;
pub mod manifest;
pub mod manifest_reads;
pub mod object_store;
pub mod pointer;
pub mod pointer_back;
pub mod pointer_reads;
pub mod preview_prefix;
pub mod resolve;
#[cfg(test)]
pub mod storage_fixture;
pub mod store_errors;
