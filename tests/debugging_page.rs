//! The stall report and the divergence panic shown in docs/debugging.md are
//! real: this file makes them (the call sites they name are lines of this
//! file), `SYNCTHREADS_BLESS=1` writes them into the page, and otherwise the
//! test compares them with the page, up to the times waited.
#![cfg(feature = "diagnostics")]

mod common;

use common::{panic_of, watchdog};
use std::sync::mpsc::Receiver;
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};
use syncthreads::diagnostics::{stalls, Stall};
use syncthreads::{launch, Block};

/// Ranks 0, 1 and 2 sync; rank 3 is stuck elsewhere until `stuck` says go.
fn kernel(block: &Block<'_>, stuck: &Mutex<Receiver<()>>) {
    if block.thread_rank() == 3 {
        stuck.lock().unwrap().recv().unwrap();
    }
    block.sync();
}

/// A sync inside a branch that depends on the rank.
fn divergent(block: &Block<'_>) {
    if block.thread_rank() == 0 {
        block.sync();
    }
    block.sync();
}

/// The block's stall once its three waiters have waited a quarter second.
fn report() -> String {
    let (go, stuck) = mpsc::channel::<()>();
    let stuck = Mutex::new(stuck);
    watchdog(60, String::new, || {
        std::thread::scope(|s| {
            // Rank 0 runs on the launching thread, named as a program's would be.
            let caller = std::thread::Builder::new().name("main".into());
            caller
                .spawn_scoped(s, || launch(4, |block| kernel(block, &stuck)))
                .unwrap();
            let start = Instant::now();
            let stall: Stall = loop {
                let found = stalls(Duration::from_millis(250));
                match found
                    .into_iter()
                    .find(|s| s.barrier().starts_with("BlockBarrier"))
                {
                    Some(stall) if stall.waiting().len() == 3 => break stall,
                    _ => {
                        assert!(start.elapsed() < Duration::from_secs(20), "no stall");
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            };
            go.send(()).unwrap();
            format!("{stall}\n")
        })
    })
}

/// Where `doc`'s snippet `name` is: between `<!-- name -->` and its fence
/// line, and the closing fence.
fn snippet(doc: &str, name: &str) -> (usize, usize) {
    let open = format!("<!-- {name} -->\n```text\n");
    let start = doc.find(&open).expect("snippet start") + open.len();
    let end = start + doc[start..].find("```\n<!-- /").expect("snippet end");
    (start, end)
}

fn get<'a>(doc: &'a str, name: &str) -> &'a str {
    let (start, end) = snippet(doc, name);
    &doc[start..end]
}

fn with(doc: &str, name: &str, text: &str) -> String {
    let (start, end) = snippet(doc, name);
    format!("{}{text}{}", &doc[..start], &doc[end..])
}

/// The waiters are listed longest first, which varies from run to run:
/// the report's lines with the waiters' sorted (the label `waiting:` moved
/// off the first one).
fn waiters_in_any_order(report: &str) -> Vec<String> {
    let mut lines: Vec<String> = report
        .lines()
        .map(|l| l.replacen("waiting: ", "         ", 1))
        .collect();
    lines.sort();
    lines
}

/// Durations vary from run to run: `1.234s`, `12.5ms`, `800.000µs`, ...
fn without_times(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(" for ") {
        out.push_str(&rest[..i + 5]);
        rest = &rest[i + 5..];
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if n > 0 {
            out.push_str("<time>");
            rest = rest[n..].trim_start_matches(|c: char| c.is_alphabetic() || c == 'µ');
        }
    }
    out.push_str(rest);
    out
}

/// The phase and the two syncs of a divergence message, in rank order
/// (which thread reports depends on timing).
fn sides(message: &str) -> (String, Vec<String>) {
    let (head, tail) = message.split_once(": rank ").expect(message);
    let mut sides: Vec<String> = format!("rank {tail}")
        .replace(" synced at ", " at ")
        .split(", ")
        .map(str::to_owned)
        .collect();
    sides.sort();
    (head.to_owned(), sides)
}

#[test]
fn the_debugging_page_shows_a_real_report_and_panic() {
    let report = report();
    let panic = panic_of(|| watchdog(60, String::new, || launch(2, divergent)));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/debugging.md");
    let doc = std::fs::read_to_string(path).unwrap();
    if std::env::var_os("SYNCTHREADS_BLESS").is_some() {
        let doc = with(&doc, "report", &report);
        let doc = with(&doc, "divergence", &format!("{panic}\n"));
        std::fs::write(path, doc).unwrap();
        return;
    }
    assert_eq!(
        waiters_in_any_order(&without_times(get(&doc, "report"))),
        waiters_in_any_order(&without_times(&report)),
        "docs/debugging.md's report is stale: rerun with SYNCTHREADS_BLESS=1"
    );
    assert_eq!(
        sides(get(&doc, "divergence").trim_end()),
        sides(&panic),
        "docs/debugging.md's panic is stale: rerun with SYNCTHREADS_BLESS=1"
    );
}
