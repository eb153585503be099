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

/// Stays silent for the panics the tests provoke (`boom`).
// Only the files whose tests panic on purpose call it.
#[allow(dead_code)]
pub fn quiet() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&"boom") {
                default(info);
            }
        }));
    });
}
