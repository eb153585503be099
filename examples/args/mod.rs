//! The command line of the examples: positional counts, each with a name, a
//! default and an allowed range. `--help` prints the usage (exit status 0);
//! a count out of its range, something that is not a count, an unknown flag
//! or one argument too many prints what is wrong, naming the argument and
//! its range, then the usage, to stderr (exit status 2). The ranges, and a
//! bound on the product of the counts that set a run's work
//! ([`Cli::at_most`]), keep every run finite, short and its memory bounded.
//! Parsed with `lexopt` (a dev-dependency); an example with flags of its
//! own (`heat`) reads them with the same parser, [`number_in`] and
//! [`flag_text`].

// Each example compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use std::ops::RangeInclusive;
use std::process::exit;

/// One positional count.
pub struct Count {
    pub name: &'static str,
    pub default: usize,
    pub range: RangeInclusive<usize>,
}

/// A count named `name`, `default` when not given, allowed in `range`.
pub const fn count(name: &'static str, default: usize, range: RangeInclusive<usize>) -> Count {
    Count {
        name,
        default,
        range,
    }
}

/// An example's command line: its name, its counts, and a note for the
/// usage (what else must hold, or "").
pub struct Cli<const N: usize> {
    pub program: &'static str,
    pub counts: [Count; N],
    pub note: &'static str,
}

impl<const N: usize> Cli<N> {
    /// The usage: one line of the form, one line per count.
    pub fn usage(&self) -> String {
        let mut u = format!("usage: {}", self.program);
        for c in &self.counts {
            u.push_str(&format!(" [{}]", c.name));
        }
        for c in &self.counts {
            u.push_str(&format!(
                "\n  {:<14} {}..={}, default {}",
                c.name,
                c.range.start(),
                c.range.end(),
                c.default
            ));
        }
        if !self.note.is_empty() {
            u.push_str(&format!("\n  {}", self.note));
        }
        u
    }

    /// Prints `why` and the usage to stderr and exits with status 2.
    pub fn bad(&self, why: &str) -> ! {
        eprintln!("{}: {why}\n{}", self.program, self.usage());
        exit(2)
    }

    /// Refuses a run in which `what` (a product of counts, such as
    /// `"threads * phases"`) is `value`, above `max`; `why` says what the
    /// bound keeps in check. Usage error, status 2.
    pub fn at_most(&self, what: &str, value: usize, max: usize, why: &str) {
        if value > max {
            self.bad(&format!(
                "{what} must be at most {max} ({why}), not {value}"
            ));
        }
    }

    /// Reads the counts (module docs).
    pub fn parse(&self) -> [usize; N] {
        end_quietly_when_stdout_closes();
        let mut parser = lexopt::Parser::from_env();
        let mut values = self.counts.each_ref().map(|c| c.default);
        let mut given = 0;
        while let Some(arg) = parser.next().unwrap_or_else(|e| self.bad(&e.to_string())) {
            let arg = match arg {
                lexopt::Arg::Short('h') | lexopt::Arg::Long("help") => {
                    println!("{}", self.usage());
                    exit(0)
                }
                lexopt::Arg::Value(value) => value.to_string_lossy().into_owned(),
                // What `cargo bench` passes, for a bench that uses this module.
                lexopt::Arg::Long("bench") => continue,
                flag => self.bad(&match N {
                    0 => format!(
                        "unknown flag {:?} (this example takes no arguments)",
                        flag_text(&flag)
                    ),
                    _ => format!(
                        "unknown flag {:?} (this example takes only counts)",
                        flag_text(&flag)
                    ),
                }),
            };
            let Some(c) = self.counts.get(given) else {
                match N {
                    0 => self.bad(&format!("unexpected argument {arg:?}: it takes none")),
                    _ => self.bad(&format!("unexpected argument {arg:?}: at most {N} counts")),
                }
            };
            values[given] = match arg.parse::<usize>() {
                Ok(v) if c.range.contains(&v) => v,
                _ => self.bad(&format!(
                    "{} must be a number in {}..={}, not {arg:?}",
                    c.name,
                    c.range.start(),
                    c.range.end()
                )),
            };
            given += 1;
        }
        values
    }
}

/// A flag as the user typed it: `--name` or `-n`.
pub fn flag_text(arg: &lexopt::Arg<'_>) -> String {
    match arg {
        lexopt::Arg::Long(name) => format!("--{name}"),
        lexopt::Arg::Short(c) => format!("-{c}"),
        lexopt::Arg::Value(value) => value.to_string_lossy().into_owned(),
    }
}

/// For an example with flags (`heat`): the value of the flag `name` just
/// read, a number in `range`; a missing or bad value is `bad`'s usage error.
pub fn number_in(
    parser: &mut lexopt::Parser,
    name: &str,
    range: RangeInclusive<usize>,
    bad: fn(String) -> !,
) -> usize {
    let text = match parser.value() {
        Ok(text) => text.to_string_lossy().into_owned(),
        Err(_) => bad(format!("{name} needs a number in {range:?}")),
    };
    match text.parse::<usize>() {
        Ok(v) if range.contains(&v) => v,
        _ => bad(format!(
            "{name} must be a number in {range:?}, not {text:?}"
        )),
    }
}

/// Makes a reader that closes the output early (`example | head`) end the
/// example quietly, with status 0, as command-line tools do, instead of
/// with `println!`'s panic on the broken pipe. Other panics print as usual.
pub fn end_quietly_when_stdout_closes() {
    let print = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        // std's message for a failed `println!`; error 32 is EPIPE.
        if message.starts_with("failed printing to stdout") && message.contains("(os error 32)") {
            exit(0);
        }
        print(info);
    }));
}

/// `n` and `noun`, plural unless `n` is 1: `counted(1, "thread")` shows
/// `1 thread`, `counted(4, "thread")` `4 threads`.
pub fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
