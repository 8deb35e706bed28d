//! `celld-bench [FLEETS...]`: measures the celld-operator binary on the local control plane and
//! writes `bench/REPORT.md`.
//!
//! For each fleet count it starts the operator as a separate process (so its memory is its
//! own), creates that many fleets with a deployment, and measures: time until every fleet is
//! Ready, the operator's resident memory, API writes per fleet to converge, and API writes
//! during idle periodic reconciles (the no-op guarantee: 0). It also times the pure builders.

mod measure;
mod report;

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let counts = if counts.is_empty() {
        vec![10, 50, 100]
    } else {
        counts
    };
    match measure::run(&counts).await {
        Ok(results) => {
            let path = report::write(&results);
            match path {
                Ok(path) => {
                    println!("wrote {}", path.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("bench: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}
