//! `SYNCTHREADS_STALL_REPORT=<seconds>`: a monitor thread that prints each
//! stalled phase's report to stderr once.
//!
//! The variable is read once, when the process's first wait is recorded (a
//! thread's first blocking wait, or an async wait found pending). If it
//! holds a number of seconds above zero (fractions allowed), a thread named
//! `syncthreads-stall-report` starts; it sleeps until the earliest waiter could
//! have waited that long, looks, and prints every phase whose longest waiter
//! has, once per stalled phase. A phase counts as reported until all of its
//! waiters have begun after the report (the phase completed and, four
//! phases later, the same phase number stalls again; or every waiter was a
//! timed wait that gave up and waited anew), then it is reported again.

use super::stall::{self, Key};
use std::collections::HashMap;
use std::io::Write;
use std::sync::Once;
use std::time::{Duration, Instant};

/// The variable's name.
pub(crate) const VAR: &str = "SYNCTHREADS_STALL_REPORT";

/// Starts the monitor if the variable asks for it (once per process).
pub(crate) fn start_if_asked() {
    static START: Once = Once::new();
    START.call_once(|| {
        let Some(threshold) = threshold(std::env::var_os(VAR)) else {
            return;
        };
        let spawned = std::thread::Builder::new()
            .name("syncthreads-stall-report".to_owned())
            .spawn(move || monitor(threshold));
        if let Err(e) = spawned {
            let _ = writeln!(
                std::io::stderr(),
                "syncthreads: {VAR}: could not start the stall-report thread: {e}"
            );
        }
    });
}

/// The threshold the variable asks for: `None` when unset, empty or zero
/// (off), and for a value that is not a number of seconds (with a line on
/// stderr saying so: a report silently not made would be found out only at
/// the next hang).
fn threshold(value: Option<std::ffi::OsString>) -> Option<Duration> {
    let value = value?;
    let text = value.to_string_lossy();
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    match text.parse::<f64>().ok().map(Duration::try_from_secs_f64) {
        Some(Ok(d)) if d.is_zero() => None,
        Some(Ok(d)) => Some(d),
        _ => {
            let _ = writeln!(
                std::io::stderr(),
                "syncthreads: {VAR}={text:?} is not a number of seconds (e.g. 2 or 0.5); no stall reports"
            );
            None
        }
    }
}

/// The monitor thread's loop: never returns.
fn monitor(threshold: Duration) {
    // Each reported phase, with when it was reported.
    let mut reported: HashMap<Key, Instant> = HashMap::new();
    loop {
        let scan = stall::collect(threshold);
        let now = Instant::now();
        let mut out = String::new();
        for (key, first, stall) in &scan.stalls {
            // A phase whose earliest waiter began after its report is a new
            // stall of the same phase number.
            if reported.get(key).is_none_or(|at| first > at) {
                reported.insert(*key, now);
                out.push_str(&format!("{stall}\n"));
            }
        }
        if !out.is_empty() {
            // One write for all: the reports stay whole between other output.
            let _ = std::io::stderr().write_all(out.as_bytes());
        }
        reported.retain(|key, _| scan.waiting.iter().any(|(k, _)| k == key));
        // Sleep until the earliest waiter not yet reported reaches the
        // threshold; a wait that begins meanwhile reaches it later.
        let earliest = scan
            .waiting
            .iter()
            .filter(|(key, first)| reported.get(key).is_none_or(|at| first > at))
            .map(|&(_, first)| first)
            .min()
            .unwrap_or(now);
        std::thread::sleep(nap(earliest, threshold, Instant::now()));
    }
}

/// How long the monitor sleeps: until `earliest` (a wait's start) is
/// `threshold` old, at least 1 ms and at most `threshold`. Saturating: the
/// variable may hold more seconds than an `Instant` can add (`1e18`), and a
/// threshold past the clock's end is a sleep of `threshold`.
fn nap(earliest: Instant, threshold: Duration, now: Instant) -> Duration {
    earliest
        .checked_add(threshold)
        .map_or(threshold, |at| at.saturating_duration_since(now))
        .clamp(
            Duration::from_millis(1),
            threshold.max(Duration::from_millis(1)),
        )
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_is_read_in_seconds() {
        let t = |v: &str| threshold(Some(v.into()));
        assert_eq!(t("2"), Some(Duration::from_secs(2)));
        assert_eq!(t(" 0.25 "), Some(Duration::from_millis(250)));
        assert_eq!(t("0"), None);
        assert_eq!(t(""), None);
        assert_eq!(t("two"), None);
        assert_eq!(t("-1"), None);
        assert_eq!(threshold(None), None);
    }

    #[test]
    fn any_threshold_gives_a_nap_without_overflow() {
        let now = Instant::now();
        let huge = threshold(Some("1e18".into())).unwrap();
        assert_eq!(nap(now, huge, now), huge);
        assert_eq!(nap(now, Duration::MAX, now), Duration::MAX);
        assert_eq!(nap(now, Duration::ZERO, now), Duration::from_millis(1));
        let two = Duration::from_secs(2);
        assert_eq!(nap(now, two, now), two);
        assert_eq!(nap(now, two, now + two), Duration::from_millis(1));
    }
}
