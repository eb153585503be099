//! What every shuttle test file shares: how many schedules, and the two
//! schedulers each test runs under. Included by path (`#[path]`), since the
//! shuttle files are built with `--cfg shuttle` and do not use `common`.

/// Schedules per scheduler: `SHUTTLE_ITERATIONS`, or 1000.
pub fn iterations() -> usize {
    std::env::var("SHUTTLE_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

/// Runs `f` under shuttle's random scheduler and then its PCT scheduler
/// (which favours the rare orderings that need a few forced preemptions).
pub fn check(f: impl Fn() + Send + Sync + 'static) {
    let f = std::sync::Arc::new(f);
    let g = f.clone();
    shuttle::check_random(move || g(), iterations());
    shuttle::check_pct(move || f(), iterations(), 3);
}
