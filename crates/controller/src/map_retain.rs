//! Dropping the entries of deleted fleets from a per-fleet map, and the room they took: a map
//! keeps its capacity when entries leave, and after 300 fleets are deleted their tables would
//! stay allocated (and keep the allocator's pages around them) for as long as the operator runs.

use std::collections::HashMap;
use std::hash::Hash;

/// Room for fewer entries than this is never given back: growing it again costs more than it
/// holds.
const SMALL: usize = 64;

/// Whether room for `room` entries holding `held` is worth giving back: the one rule for every
/// table the operator shrinks (these maps and the watches' caches), a quarter full or less.
pub fn worth_shrinking(held: usize, room: usize) -> bool {
    room >= SMALL && held.saturating_mul(4) <= room
}

/// Keeps the entries `keep` accepts and shrinks `map` when it has room for four times more.
pub fn retain<K: Eq + Hash, V>(map: &mut HashMap<K, V>, keep: impl FnMut(&K, &mut V) -> bool) {
    map.retain(keep);
    shrink(map);
}

/// Shrinks `map` when it has room for four times more than it holds.
pub fn shrink<K: Eq + Hash, V>(map: &mut HashMap<K, V>) {
    if worth_shrinking(map.len(), map.capacity()) {
        map.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(n: u32) -> HashMap<u32, u32> {
        (0..n).map(|i| (i, i)).collect()
    }

    #[test]
    fn room_a_quarter_full_or_less_is_worth_giving_back() {
        assert!(!worth_shrinking(0, SMALL - 1));
        assert!(worth_shrinking(16, 64));
        assert!(!worth_shrinking(17, 64));
        assert!(worth_shrinking(0, 300));
        assert!(!worth_shrinking(300, 300));
    }

    #[test]
    fn a_map_emptied_by_deletions_gives_back_its_room() {
        let mut m = map(1_000);
        retain(&mut m, |k, _| *k < 10);
        assert_eq!(m.len(), 10);
        assert!(m.capacity() <= SMALL, "{}", m.capacity());
    }

    #[test]
    fn a_map_still_mostly_used_keeps_its_room() {
        let mut m = map(1_000);
        retain(&mut m, |k, _| *k < 600);
        assert_eq!(m.len(), 600);
        // Shrunk, 600 entries would fit in a table of 896.
        assert!(m.capacity() >= 1_000, "{}", m.capacity());
    }

    #[test]
    fn a_small_map_is_left_alone() {
        let mut m = map(40);
        retain(&mut m, |_, _| false);
        assert!(m.is_empty());
        // Shrunk, an empty map has no room at all. Left alone it keeps some, though less than
        // it had: removed entries may leave tombstones that only a rehash clears.
        assert!(m.capacity() > 0, "{}", m.capacity());
    }
}
