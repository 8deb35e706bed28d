//! The `celld-operator` binary.

fn main() {}
