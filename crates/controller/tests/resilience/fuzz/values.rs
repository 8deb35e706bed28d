//! Values for the generated manifests, per kind of value: valid ones, boundary ones (at a
//! length or range limit, either side) and hostile ones. Drawn from a seeded generator, so a
//! seed gives the same values every run. Names and text, settings (quantities, endpoints,
//! buckets), durations and counts, label selectors, and the references a rollout ships from
//! and calls (image references, source directories, webhook URLs).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Evaluates one of the expressions, chosen by the generator `$g`: only the chosen one runs.
macro_rules! one_of {
    ($g:expr; $($e:expr),+ $(,)?) => {{
        let count = [$(stringify!($e)),+].len();
        let index = $g.below(count);
        one_of!(@arm (index); $($e),+)
    }};
    (@arm ($i:expr); $last:expr) => { $last };
    (@arm ($i:expr); $head:expr, $($tail:expr),+) => {
        if $i == 0 { $head } else { one_of!(@arm ($i - 1); $($tail),+) }
    };
}

mod durations;
mod names;
mod references;
mod selectors;
mod settings;

/// What a generated value is meant to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Valid,
    Boundary,
    Hostile,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Valid => "valid",
            Class::Boundary => "boundary",
            Class::Hostile => "hostile",
        }
    }
}

/// The seeded source of every generated value.
pub struct Gen {
    rng: StdRng,
}

const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

impl Gen {
    pub fn new(seed: u64) -> Self {
        Gen {
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// A number in `range`.
    pub fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    /// Valid most of the time, boundary or hostile otherwise.
    pub fn class(&mut self) -> Class {
        match self.below(10) {
            0..=3 => Class::Valid,
            4..=5 => Class::Boundary,
            _ => Class::Hostile,
        }
    }

    /// `len` lowercase letters and digits, starting with a letter.
    pub fn word(&mut self, len: usize) -> String {
        (0..len)
            .map(|i| {
                let set = if i == 0 { &LOWER[..26] } else { LOWER };
                char::from(set[self.rng.random_range(0..set.len())])
            })
            .collect()
    }

    /// A DNS label of exactly `len` characters (letters, digits, inner dashes).
    pub fn label(&mut self, len: usize) -> String {
        let mut s = self.word(len);
        if len > 2 && self.chance(0.5) {
            s.replace_range(len / 2..len / 2 + 1, "-");
        }
        s
    }

    /// A DNS subdomain of about `len` characters: labels of up to 63 joined by dots.
    pub fn subdomain(&mut self, len: usize) -> String {
        let mut parts = Vec::new();
        let mut left = len;
        while left > 0 {
            let take = left.min(self.rng.random_range(1..=63));
            let take = if left - take == 1 { take + 1 } else { take };
            let take = take.min(left);
            parts.push(self.word(take));
            left -= take;
            left = left.saturating_sub(1);
        }
        parts.join(".")
    }

    /// `count` random bytes of printable ASCII.
    pub fn printable(&mut self, count: usize) -> String {
        (0..count)
            .map(|_| char::from(self.rng.random_range(0x20u8..0x7f)))
            .collect()
    }
}
