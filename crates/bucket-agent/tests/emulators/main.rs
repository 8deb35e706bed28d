//! `celld-bucket` against the object-store emulators of the local control plane (`make
//! cluster-up`): s3s-fs, fake-gcs-server and Azurite. Each test runs the built binary with
//! exactly the environment a deploy pod gives it (`CELLD_BUCKET`, the store's credentials, and
//! the variable pointing its client at the emulator) and the command lines `kubectl celld
//! history` and `rollback` send, and reads its one JSON answer. Without the emulators the
//! tests fail, saying to run `make cluster-up`.
//!
//! `make check-object-stores` checks the emulators' raw HTTP semantics; these check what the
//! agent makes of them: a create over an existing pointer and an overwrite on a stale version
//! are lost races (`changed`), whatever status code the store answers with.

mod agent;
mod compare_and_swap;
mod concurrent_writers;
mod listing;
mod stores;

/// A test's result: errors say what was expected.
pub type TestResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// One `#[test]` per store for each scenario `fn(Store) -> TestResult`.
#[macro_export]
macro_rules! on_every_store {
    ($($scenario:ident),+ $(,)?) => {
        mod s3 {
            $(#[test]
            fn $scenario() -> $crate::TestResult {
                super::$scenario($crate::stores::Store::S3)
            })+
        }
        mod gcs {
            $(#[test]
            fn $scenario() -> $crate::TestResult {
                super::$scenario($crate::stores::Store::Gcs)
            })+
        }
        mod azure {
            $(#[test]
            fn $scenario() -> $crate::TestResult {
                super::$scenario($crate::stores::Store::Azure)
            })+
        }
    };
}
