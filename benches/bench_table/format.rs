//! Formatting of times, ratios and verdicts, and the small statistics.

/// A duration in ns with its unit, 3 significant digits: "61 ns", "4.71 µs",
/// "12.6 µs", "82.0 ms"; "-" for NaN.
pub(crate) fn fmt_time(ns: f64) -> String {
    if !ns.is_finite() {
        return "-".into();
    }
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    if v >= 100.0 || unit == "ns" && v >= 10.0 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

/// A ratio with 3 significant digits and an "x": "30.8x", "1.09x",
/// "0.0444x", "1.4e-4x"; "-" when a side is missing.
pub(crate) fn fmt_ratio(r: f64) -> String {
    if !r.is_finite() || r <= 0.0 {
        "-".into()
    } else if !(1e-3..1e4).contains(&r) {
        format!("{r:.1e}x")
    } else if r >= 100.0 {
        format!("{r:.0}x")
    } else if r >= 10.0 {
        format!("{r:.1}x")
    } else if r >= 1.0 {
        format!("{r:.2}x")
    } else if r >= 0.1 {
        format!("{r:.3}x")
    } else if r >= 0.01 {
        format!("{r:.4}x")
    } else {
        format!("{r:.5}x")
    }
}

pub(crate) fn fmt_pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

pub(crate) fn join<T: std::fmt::Display>(v: impl Iterator<Item = T>) -> String {
    v.map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

/// The `q`-quantile of `v` (0 ≤ q ≤ 1), linear between the order statistics;
/// NaN when empty.
pub(crate) fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    let pos = q * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

pub(crate) fn med(v: &[f64]) -> f64 {
    quantile(v, 0.5)
}

pub(crate) fn first_line(path: &str, key: &str) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

pub(crate) fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// A target's verdict: "**met**" or "**missed by 1.42x**". `got` should be
/// at most `limit` (or at least, with `at_least`).
pub(crate) fn verdict(got: f64, limit: f64, at_least: bool) -> String {
    if !got.is_finite() || !limit.is_finite() {
        return "**not measured**".into();
    }
    let (ok, by) = if at_least {
        (got >= limit, limit / got)
    } else {
        (got <= limit, got / limit)
    };
    if ok {
        "**met**".into()
    } else {
        format!("**missed by {}**", fmt_ratio(by))
    }
}
