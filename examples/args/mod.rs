//! The command line of the examples: positional counts with defaults, a
//! usage line that `--help` prints (exit status 0) and that a bad argument
//! prints to stderr (exit status 2).

// Each example compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use std::process::exit;

/// Prints `usage` and exits with status 0 if the arguments ask for help.
pub fn help_if_asked(usage: &str) {
    if std::env::args().skip(1).any(|a| a == "--help" || a == "-h") {
        println!("{usage}");
        exit(0);
    }
}

/// Prints `why` and `usage` to stderr and exits with status 2.
pub fn bad_args(usage: &str, why: &str) -> ! {
    eprintln!("{why}\n{usage}");
    exit(2)
}

/// Reads up to `N` positional counts, each defaulting to `defaults[i]`; on
/// `--help` prints `usage` and exits with 0, on anything that is not a count
/// (or one argument too many) prints it to stderr and exits with 2.
pub fn counts<const N: usize>(usage: &str, defaults: [usize; N]) -> [usize; N] {
    help_if_asked(usage);
    let mut values = defaults;
    for (i, arg) in std::env::args().skip(1).enumerate() {
        if i >= N {
            bad_args(usage, &format!("unexpected argument {arg:?}"));
        }
        values[i] = arg
            .parse()
            .unwrap_or_else(|_| bad_args(usage, &format!("not a count: {arg:?}")));
    }
    values
}
