//! Progress lines of the commands that drive a deploy pod, on stderr (stdout carries celld's own
//! output and the commands' results). On a terminal the upload counter redraws in place;
//! otherwise it prints at each quarter. A fan-out deploy gives each fleet its own progress with
//! a prefix (`[apps/web] `) on every line, and never redraws: lines of fleets deployed at the
//! same time interleave whole, never within a line.

use super::human;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Reports what the deploy is doing.
pub struct Progress {
    tty: bool,
    prefix: String,
    quarter: u64,
    drawing: bool,
    publishing: Arc<AtomicBool>,
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}

impl Progress {
    /// Progress on stderr.
    pub fn new() -> Self {
        Self {
            tty: std::io::stderr().is_terminal(),
            prefix: String::new(),
            quarter: 0,
            drawing: false,
            publishing: Arc::default(),
        }
    }

    /// Progress on stderr with `prefix` before every line (no redrawing in place).
    pub fn prefixed(prefix: String) -> Self {
        Self {
            tty: false,
            prefix,
            quarter: 0,
            drawing: false,
            publishing: Arc::default(),
        }
    }

    /// A progress for a step of the same deploy (the upload): the same prefix and terminal
    /// handling, a counter of its own.
    pub fn fork(&self) -> Self {
        Self {
            tty: self.tty,
            prefix: self.prefix.clone(),
            quarter: 0,
            drawing: false,
            publishing: Arc::clone(&self.publishing),
        }
    }

    /// Set once `celld deploy` starts, from when the version may be published; shared so an
    /// interruption can tell.
    pub fn publishing(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.publishing)
    }

    /// A line about a step.
    pub fn note(&mut self, line: &str) {
        self.end_drawing();
        eprintln!("{}{line}", self.prefix);
    }

    /// Several lines (a tool's output), each with the prefix, written at once so that no other
    /// fleet's line comes in between.
    pub fn block(&mut self, text: &str) {
        self.end_drawing();
        let lines: String = text
            .lines()
            .map(|line| format!("{}{line}\n", self.prefix))
            .collect();
        eprint!("{lines}");
    }

    /// `sent` of `total` bytes are uploaded.
    pub fn upload(&mut self, sent: u64, total: u64) {
        let pct = (sent * 100).checked_div(total).unwrap_or(100);
        let line = format!(
            "Uploading: {} of {} ({pct}%)",
            human::bytes(sent),
            human::bytes(total)
        );
        if self.tty {
            eprint!("\r\x1b[2K{line}");
            let _ = std::io::stderr().flush();
            self.drawing = true;
        } else if pct / 25 > self.quarter || (sent == total && self.quarter < 4) {
            self.quarter = pct / 25;
            eprintln!("{}{line}", self.prefix);
        }
    }

    fn end_drawing(&mut self) {
        if self.drawing {
            eprintln!();
            self.drawing = false;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.end_drawing();
    }
}
