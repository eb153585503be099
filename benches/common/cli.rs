//! The command lines of the bench binaries that are not criterion's
//! (`bench_table`, `launch`, `async_bench`), on lexopt: `--help` prints the
//! usage (exit status 0); an unknown flag, a missing or bad value prints
//! what is wrong and the usage to stderr (exit status 2).

use std::fmt::Display;
use std::str::FromStr;

/// The arguments, without the `--bench` that `cargo bench` adds.
pub fn parser() -> lexopt::Parser {
    lexopt::Parser::from_iter(std::env::args_os().filter(|a| a != "--bench"))
}

/// A bench's command line: its name and usage text.
pub struct Cli {
    pub program: &'static str,
    pub usage: fn() -> String,
}

impl Cli {
    /// Prints `why` and the usage to stderr and exits with status 2.
    pub fn bad(&self, why: impl Display) -> ! {
        eprintln!("{}: {why}\n{}", self.program, (self.usage)());
        std::process::exit(2)
    }

    /// Prints the usage to stdout and exits with status 0.
    pub fn help(&self) -> ! {
        println!("{}", (self.usage)());
        std::process::exit(0)
    }

    /// The next argument, or a usage error for lexopt's.
    pub fn next<'p>(&self, parser: &'p mut lexopt::Parser) -> Option<lexopt::Arg<'p>> {
        parser.next().unwrap_or_else(|e| self.bad(e))
    }

    /// The value of `flag`, as text, or a usage error.
    pub fn text(&self, parser: &mut lexopt::Parser, flag: &str) -> String {
        match parser.value() {
            Ok(v) => v.to_string_lossy().into_owned(),
            Err(_) => self.bad(format!("{flag} needs a value")),
        }
    }

    /// The value of `flag`, a number, or a usage error.
    pub fn number<T: FromStr>(&self, parser: &mut lexopt::Parser, flag: &str) -> T {
        let text = self.text(parser, flag);
        self.parse(flag, &text)
    }

    /// `text`, a number given for `flag`, or a usage error.
    pub fn parse<T: FromStr>(&self, flag: &str, text: &str) -> T {
        text.trim()
            .parse()
            .unwrap_or_else(|_| self.bad(format!("{flag}: not a number: {text:?}")))
    }

    /// An argument no arm took: a usage error naming it.
    pub fn unexpected(&self, arg: lexopt::Arg<'_>) -> ! {
        self.bad(arg.unexpected())
    }
}

/// A criterion bench's command line, checked before criterion reads it: an
/// argument that criterion would refuse prints what is wrong and the usage
/// to stderr and exits with status 2, as the other bench binaries do
/// (criterion's own error is one line without the usage). Filters and
/// every criterion option pass through unchanged.
// Only the criterion benches call it; the others include this file too.
#[allow(dead_code)]
pub fn criterion_args(program: &'static str) {
    /// Criterion's options that take no value.
    const FLAGS: &[&str] = &[
        "-v",
        "--verbose",
        "--quiet",
        "-n",
        "--noplot",
        "--discard-baseline",
        "--list",
        "--ignored",
        "--exact",
        "--quick",
        "--test",
        "--bench",
        "--nocapture",
        "-h",
        "--help",
        "-V",
        "--version",
    ];
    /// Criterion's options that take a value (`--name value` or `--name=value`).
    const VALUED: &[&str] = &[
        "-c",
        "--color",
        "-s",
        "--save-baseline",
        "-b",
        "--baseline",
        "--baseline-lenient",
        "--format",
        "--profile-time",
        "--load-baseline",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--plotting-backend",
        "--output-format",
    ];
    let bad = |why: String| -> ! {
        eprintln!(
            "{program}: {why}\nusage: cargo bench --bench {program} -- [FILTER] [criterion's options: --help lists them]"
        );
        std::process::exit(2)
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--" {
            return;
        }
        if !arg.starts_with('-') || FLAGS.contains(&arg.as_str()) {
            continue;
        }
        let name = arg.split('=').next().unwrap_or(&arg);
        if !VALUED.contains(&name) {
            bad(format!("unknown flag {arg:?}"));
        }
        if !arg.contains('=') && args.next().is_none() {
            bad(format!("{arg} needs a value"));
        }
    }
}
