//! The verdicts of recent tokens, so that a scrape every few seconds does not cost a
//! TokenReview and a SubjectAccessReview each: an allowed token is trusted for a minute, a
//! refused one refused for ten seconds (a binding just created takes effect soon), and at most
//! [`CAPACITY`] tokens are remembered. Tokens are kept as their SHA-256, never as themselves.

use super::verdict::Verdict;
use crate::locks::lock;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long an allowed token stays allowed without asking the API server again.
pub const ALLOWED_FOR: Duration = Duration::from_secs(60);
/// How long a refused token stays refused without asking the API server again.
pub const REFUSED_FOR: Duration = Duration::from_secs(10);
/// Tokens remembered at most; beyond, the one closest to expiry is forgotten first.
pub const CAPACITY: usize = 256;

/// Recent verdicts by token digest.
#[derive(Debug, Default)]
pub struct Verdicts {
    entries: Mutex<HashMap<[u8; 32], (Verdict, Instant)>>,
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Verdicts {
    /// The verdict on `token` still valid at `now`, if any.
    pub fn get(&self, token: &str, now: Instant) -> Option<Verdict> {
        let entries = lock(&self.entries);
        entries
            .get(&digest(token))
            .filter(|(_, until)| *until > now)
            .map(|(verdict, _)| verdict.clone())
    }

    /// Remembers `verdict` on `token` from `now`, for [`ALLOWED_FOR`] or [`REFUSED_FOR`].
    pub fn put(&self, token: &str, verdict: Verdict, now: Instant) {
        let until = now
            + if verdict == Verdict::Allowed {
                ALLOWED_FOR
            } else {
                REFUSED_FOR
            };
        let mut entries = lock(&self.entries);
        entries.retain(|_, (_, until)| *until > now);
        if entries.len() >= CAPACITY {
            let first_to_expire = entries
                .iter()
                .min_by_key(|(_, (_, until))| *until)
                .map(|(key, _)| *key);
            if let Some(key) = first_to_expire {
                entries.remove(&key);
            }
        }
        entries.insert(digest(token), (verdict, until));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_for_a_minute_refused_for_ten_seconds() {
        let verdicts = Verdicts::default();
        let start = Instant::now();
        let refused = Verdict::Forbidden("no".into());
        verdicts.put("good", Verdict::Allowed, start);
        verdicts.put("bad", refused.clone(), start);
        let later = |s| start + Duration::from_secs(s);
        assert_eq!(verdicts.get("good", later(59)), Some(Verdict::Allowed));
        assert_eq!(verdicts.get("bad", later(9)), Some(refused));
        assert_eq!(verdicts.get("bad", later(10)), None);
        assert_eq!(verdicts.get("good", later(60)), None);
        assert_eq!(verdicts.get("other", start), None);
    }

    #[test]
    fn bounded_forgetting_the_first_to_expire() {
        let verdicts = Verdicts::default();
        let start = Instant::now();
        verdicts.put("refused", Verdict::Forbidden("no".into()), start);
        for i in 1..CAPACITY + 10 {
            verdicts.put(&format!("token-{i}"), Verdict::Allowed, start);
        }
        assert_eq!(lock(&verdicts.entries).len(), CAPACITY);
        assert_eq!(verdicts.get("refused", start), None, "the first to expire");
        let much_later = start + ALLOWED_FOR;
        verdicts.put("new", Verdict::Allowed, much_later);
        assert_eq!(
            lock(&verdicts.entries).len(),
            1,
            "expired entries are dropped"
        );
    }
}
