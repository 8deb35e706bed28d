//! One duration over another, as the results compare each to its floor.

use std::time::Duration;

/// `a / b`, NaN when `b` is zero.
pub fn ratio(a: Duration, b: Duration) -> f64 {
    if b.is_zero() {
        f64::NAN
    } else {
        a.as_secs_f64() / b.as_secs_f64()
    }
}
