//! Foreign load: hog threads or processes beside the participants.

use super::*;

/// Busy `pattern.0`, then asleep `pattern.1`, in turn, while `go()` holds.
pub(crate) fn hog_loop(pattern: (Duration, Duration), go: impl Fn() -> bool) {
    while go() {
        let until = Instant::now() + pattern.0;
        while Instant::now() < until {
            spin_work(2_000);
        }
        if !pattern.1.is_zero() {
            std::thread::sleep(pattern.1);
        }
    }
}

/// `--be-hog`: one foreign-load process; ends when killed or when the
/// process that started it has gone (it is then re-parented).
pub(crate) fn be_hog(pattern: (Duration, Duration)) -> ! {
    // SAFETY: getppid has no preconditions and cannot fail.
    let parent = unsafe { libc::getppid() };
    // SAFETY: as above.
    hog_loop(pattern, || unsafe { libc::getppid() } == parent);
    std::process::exit(0)
}

/// The foreign load of `--hogs`, stopped when dropped.
pub(crate) struct Hogs {
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) threads: Vec<std::thread::JoinHandle<()>>,
    pub(crate) procs: Vec<std::process::Child>,
}

impl Hogs {
    pub(crate) fn start(o: &Opts) -> Hogs {
        let stop = Arc::new(AtomicBool::new(false));
        let mut h = Hogs {
            stop: stop.clone(),
            threads: Vec::new(),
            procs: Vec::new(),
        };
        let (busy, asleep) = o.hog_pattern;
        for _ in 0..o.hogs {
            if o.hog_procs {
                let exe = std::env::current_exe().expect("current_exe");
                let child = std::process::Command::new(exe)
                    .arg("--be-hog")
                    .arg(format!("{},{}", busy.as_millis(), asleep.as_millis()))
                    .stdin(std::process::Stdio::null())
                    .spawn()
                    .expect("could not start a hog process");
                h.procs.push(child);
            } else {
                let stop = stop.clone();
                h.threads.push(std::thread::spawn(move || {
                    // Relaxed: a stop flag; nothing is published through it.
                    hog_loop((busy, asleep), || !stop.load(Ordering::Relaxed))
                }));
            }
        }
        h
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        // Relaxed: a stop flag; the join below synchronises.
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            t.join().expect("hog thread panicked");
        }
        for mut p in self.procs.drain(..) {
            let _ = p.kill();
            let _ = p.wait();
        }
    }
}

pub(crate) fn describe_load(o: &Opts) -> String {
    if o.hogs == 0 {
        return "none started by the bench".into();
    }
    let what = if o.hog_procs { "processes" } else { "threads" };
    let pattern = if o.hog_pattern.1.is_zero() {
        "busy all the time".to_string()
    } else {
        format!(
            "busy {} ms then asleep {} ms, in turn",
            o.hog_pattern.0.as_millis(),
            o.hog_pattern.1.as_millis()
        )
    };
    format!(
        "{} foreign {what} (not participants), {pattern}, during the episode measurements",
        o.hogs
    )
}
