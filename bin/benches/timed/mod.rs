//! Timing a command for the benchmarks: its wall time and peak resident memory, by `/usr/bin/time -v`.

#![allow(dead_code)]

use std::process::Command;
use std::time::Duration;

/// What `/usr/bin/time -v` says of a command: wall time and peak resident memory.
#[derive(Debug, Clone, Copy)]
pub struct Run {
    pub wall: Duration,
    pub peak_kb: u64,
}

pub fn measured(command: Command) -> Run {
    let program = command.get_program().to_owned();
    let mut timed = Command::new("/usr/bin/time");
    timed.arg("-v").arg(&program).args(command.get_args());
    for (k, v) in command.get_envs() {
        match v {
            Some(v) => timed.env(k, v),
            None => timed.env_remove(k),
        };
    }
    let out = timed.output().expect("run /usr/bin/time");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{program:?} failed: {stderr}\n{}", String::from_utf8_lossy(&out.stdout));
    let field = |name: &str| {
        stderr.lines().find_map(|l| l.trim().strip_prefix(name)).map(str::trim).unwrap_or_else(|| panic!("{stderr}"))
    };
    // "h:mm:ss" or "m:ss.ss".
    let wall: f64 = field("Elapsed (wall clock) time (h:mm:ss or m:ss):")
        .split(':')
        .fold(0.0, |acc, part| acc * 60.0 + part.parse::<f64>().unwrap());
    let peak_kb = field("Maximum resident set size (kbytes):").parse().unwrap();
    Run { wall: Duration::from_secs_f64(wall), peak_kb }
}

/// The median wall time of `runs`, and the largest peak (kB).
pub fn median(mut runs: Vec<Run>) -> (Duration, u64) {
    let peak = runs.iter().map(|r| r.peak_kb).max().unwrap_or(0);
    runs.sort_by_key(|r| r.wall);
    (runs[runs.len() / 2].wall, peak)
}
