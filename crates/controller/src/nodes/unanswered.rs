//! Why a node's state is not known, by cause, in the words a status shows.

use celld_api::contract::node_api::STATE_PATH;
use std::fmt;

/// Why a node's state is not known, by cause, worded the same every time the cause is the
/// same: a status quotes it, and one that changed with a resolver's words or with the moment a
/// timeout struck would be written again for nothing. The words of the error itself go to the
/// operator's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unanswered {
    /// No connection was made: the node's name does not resolve where the operator runs, or
    /// the connection was refused, or not made in time (a NetworkPolicy or a CNI dropping it).
    Unreachable,
    /// The node took the connection and did not answer in time.
    Silent,
    /// It answered with an HTTP error status.
    ErrorStatus(u16),
    /// Its answer is not celld's state (or the exchange broke off).
    NotState,
}

impl fmt::Display for Unanswered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreachable => f.write_str("the operator cannot reach its node API"),
            Self::Silent => f.write_str("it took the connection and did not answer in time"),
            Self::ErrorStatus(status) => write!(f, "GET {STATE_PATH} answered HTTP {status}"),
            Self::NotState => write!(
                f,
                "GET {STATE_PATH} answered something that is not celld's state"
            ),
        }
    }
}
