//! Kubernetes quantities as numbers: the memory a fleet's nodes may use, in bytes.

/// The bytes a memory quantity names (`1Gi`, `512M`, `1.5Gi`, `1e9`, `2048`), rounded down; None
/// for what is not a quantity or is negative.
pub fn bytes(quantity: &str) -> Option<u64> {
    const SUFFIXES: [(&str, f64); 13] = [
        ("Ki", 1024.0),
        ("Mi", 1_048_576.0),
        ("Gi", 1_073_741_824.0),
        ("Ti", 1_099_511_627_776.0),
        ("Pi", 1_125_899_906_842_624.0),
        ("Ei", 1_152_921_504_606_846_976.0),
        ("m", 1e-3),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
    ];
    let q = quantity.trim();
    let (number, factor) = SUFFIXES
        .iter()
        .find_map(|(suffix, factor)| q.strip_suffix(suffix).map(|n| (n, *factor)))
        .unwrap_or((q, 1.0));
    if number.is_empty() || !number.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let bytes = number.parse::<f64>().ok()? * factor;
    (bytes.is_finite() && bytes < u64::MAX as f64).then_some(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn reads_every_suffix_and_refuses_what_is_not_a_quantity() {
        assert_eq!(bytes("1Gi"), Some(1 << 30));
        assert_eq!(bytes("1.5Gi"), Some(3 << 29));
        assert_eq!(bytes("512M"), Some(512_000_000));
        assert_eq!(bytes("1e9"), Some(1_000_000_000));
        assert_eq!(bytes("2048"), Some(2048));
        assert_eq!(bytes("1Ei"), Some(1 << 60));
        assert_eq!(bytes("2E"), Some(2_000_000_000_000_000_000));
        assert_eq!(bytes("1500m"), Some(1));
        for bad in ["", "Gi", "1Gb", "-1Gi", "one"] {
            assert_eq!(bytes(bad), None, "{bad}");
        }
    }
}
