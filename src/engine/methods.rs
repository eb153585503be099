//! The public methods that a `Barrier` and a `Team` share, written once:
//! the waits (blocking, timed, parity, async), the transaction counts and
//! poisoning, each one call into the phase engine. As std writes its
//! integer types' methods, one macro emits them, docs included, for each
//! type: the type passes its name for the docs, the field of its engine,
//! the method that names it to the stall reports, and an example per
//! method. Each method forwards to the engine, and nothing else.
//!
//! Each type invokes it after its own `impl` blocks, which rustdoc then
//! lists first: the type's page opens with its construction and arrivals.

/// Emits the shared methods for `$Type<F>`, in an `impl<F: Completion>`
/// block:
///
/// - `$what`: the type as the docs name it ("barrier", "team");
/// - `$arrive`, `$arrive_and_wait`: doc links to its arrivals;
/// - `engine`: the field that holds its engine;
/// - `subject`: its method that gives the subject of its waits, which the
///   engine hands to the stall reports (the engine itself, or what owns it);
/// - then, per method in the order below, its `# Examples` section.
macro_rules! engine_methods {
    (
        $Type:ident, $what:literal,
        arrive: $arrive:literal, arrive_and_wait: $arrive_and_wait:literal,
        engine: $engine:ident,
        subject: $subject:ident,
        wait { $(#[$wait:meta])* }
        try_wait { $(#[$try_wait:meta])* }
        wait_timeout { $(#[$wait_timeout:meta])* }
        wait_deadline { $(#[$wait_deadline:meta])* }
        phase_parity { $(#[$phase_parity:meta])* }
        try_wait_parity { $(#[$try_wait_parity:meta])* }
        wait_parity { $(#[$wait_parity:meta])* }
        wait_parity_timeout { $(#[$wait_parity_timeout:meta])* }
        wait_async { $(#[$wait_async:meta])* }
        wait_parity_async { $(#[$wait_parity_async:meta])* }
        expect_tx { $(#[$expect_tx:meta])* }
        complete_tx { $(#[$complete_tx:meta])* }
        poison { $(#[$poison:meta])* }
        is_poisoned { $(#[$is_poisoned:meta])* }
    ) => {
        impl<F: $crate::completion::Completion> $Type<F> {
            /// Blocks until the phase of `token` has completed.
            ///
            #[doc = concat!("Not `std::sync::Barrier::wait`: that one is ", $arrive_and_wait, "; this one")]
            #[doc = concat!("waits for the phase of an earlier ", $arrive, ".")]
            ///
            /// Returns at once if it already has (the token is from the previous
            /// phase).
            ///
            /// # Panics
            ///
            #[doc = concat!("If the ", $what, " is poisoned (even when the phase completed before), if")]
            /// the token's phase can never complete, inside this
            #[doc = concat!($what, "'s completion function, and in debug builds if the token came")]
            #[doc = concat!("from another ", $what, ".")]
            ///
            /// # Examples
            ///
            $(#[$wait])*
            #[track_caller]
            pub fn wait(&self, token: $crate::token::ArrivalToken) {
                self.$engine.wait(token, self.$subject())
            }

            /// Whether the phase of `token` has completed. Never blocks.
            ///
            /// Like every `try_wait*`, this is an acquire operation: when it
            /// returns true, everything done before the phase's arrivals and its
            #[doc = concat!("completion function is visible. On a poisoned ", $what, " it keeps")]
            #[doc = concat!("answering from the phase the ", $what, " is stuck in.")]
            ///
            /// # Panics
            ///
            #[doc = concat!("In debug builds, if the token came from another ", $what, ".")]
            ///
            /// # Examples
            ///
            $(#[$try_wait])*
            #[track_caller]
            #[must_use]
            pub fn try_wait(&self, token: &$crate::token::ArrivalToken) -> bool {
                self.$engine.try_wait(token)
            }

            /// Waits at most `timeout` for the phase of `token` to complete.
            ///
            /// Returns `Ok(())` as soon as it has, and `Err(token)` once
            /// `timeout` has really elapsed, handing the token back so the
            /// caller can wait again (the arrival stands either way). A zero
            /// timeout checks once; a timeout too large for `Instant` (such as
            /// `Duration::MAX`) means none.
            ///
            /// # Panics
            ///
            /// As [`wait`](Self::wait).
            ///
            /// # Examples
            ///
            $(#[$wait_timeout])*
            #[track_caller]
            pub fn wait_timeout(
                &self,
                token: $crate::token::ArrivalToken,
                timeout: ::std::time::Duration,
            ) -> Result<(), $crate::token::ArrivalToken> {
                self.$engine.wait_timeout(token, timeout, self.$subject())
            }

            /// Waits until `deadline` at the latest for the phase of `token` to
            /// complete; `Err` hands the token back.
            ///
            /// # Panics
            ///
            /// As [`wait`](Self::wait).
            ///
            /// # Examples
            ///
            $(#[$wait_deadline])*
            #[track_caller]
            pub fn wait_deadline(
                &self,
                token: $crate::token::ArrivalToken,
                deadline: ::std::time::Instant,
            ) -> Result<(), $crate::token::ArrivalToken> {
                self.$engine.wait_deadline(token, deadline, self.$subject())
            }

            /// Parity of the current phase: `false` for phases 0, 2, 4, …
            ///
            /// # Examples
            ///
            $(#[$phase_parity])*
            #[must_use]
            pub fn phase_parity(&self) -> bool {
                self.$engine.phase_parity()
            }

            /// Whether the phase of parity `parity` has completed, i.e. the
            /// current phase's parity differs from `parity`. Never blocks; an
            /// acquire operation like [`try_wait`](Self::try_wait).
            ///
            /// # Examples
            ///
            $(#[$try_wait_parity])*
            #[must_use]
            pub fn try_wait_parity(&self, parity: bool) -> bool {
                self.$engine.try_wait_parity(parity)
            }

            /// Blocks until [`try_wait_parity(parity)`](Self::try_wait_parity)
            /// holds, without arriving.
            ///
            /// # Panics
            ///
            #[doc = concat!("If the ", $what, " is poisoned, if the phase of that parity is the")]
            #[doc = concat!("current phase of a retired ", $what, " (it can never complete), or inside")]
            #[doc = concat!("this ", $what, "'s completion function.")]
            ///
            /// # Examples
            ///
            $(#[$wait_parity])*
            #[track_caller]
            pub fn wait_parity(&self, parity: bool) {
                self.$engine.wait_parity(parity, self.$subject())
            }

            /// Waits at most `timeout` for the phase of parity `parity` to
            /// complete; returns whether it did.
            ///
            /// # Panics
            ///
            /// As [`wait_parity`](Self::wait_parity).
            ///
            /// # Examples
            ///
            $(#[$wait_parity_timeout])*
            #[track_caller]
            #[must_use = "false: the phase had not completed in time"]
            pub fn wait_parity_timeout(&self, parity: bool, timeout: ::std::time::Duration) -> bool {
                self.$engine.wait_parity_timeout(parity, timeout, self.$subject())
            }

            /// Waits, as a future, until the phase of `token` has completed:
            /// [`wait`](Self::wait) for async code.
            ///
            /// The future never blocks its thread: while the phase is
            /// incomplete it registers its task's waker (in a table keyed by
            #[doc = concat!("the ", $what, "'s address; nothing is allocated) and returns `Pending`;")]
            /// the operation that completes the phase wakes it, as it wakes the
            /// threads that wait on the same phase. Any executor will do: only
            /// std's `Future` and `Waker` are used.
            ///
            /// # Panics
            ///
            #[doc = concat!("In debug builds, here, if the token came from another ", $what, ".")]
            #[doc = concat!("The future panics when polled if the ", $what, " is poisoned or the")]
            /// token's phase can never complete, as [`wait`](Self::wait).
            ///
            /// # Examples
            ///
            $(#[$wait_async])*
            #[track_caller]
            pub fn wait_async(
                &self,
                token: $crate::token::ArrivalToken,
            ) -> $crate::engine::WaitFuture<'_, F> {
                self.$engine.wait_async(token, self.$subject())
            }

            /// Waits, as a future, until the phase of parity `parity` has
            /// completed: [`wait_parity`](Self::wait_parity) for async code.
            /// It does not arrive: an observer task can follow the phases of a
            /// thread pool.
            ///
            /// # Panics
            ///
            /// The future panics when polled as
            /// [`wait_parity`](Self::wait_parity) does.
            ///
            /// # Examples
            ///
            $(#[$wait_parity_async])*
            #[track_caller]
            pub fn wait_parity_async(&self, parity: bool) -> $crate::engine::ParityWaitFuture<'_, F> {
                self.$engine.wait_parity_async(parity, self.$subject())
            }

            /// Adds `tx` to the current phase's transaction count: the phase
            /// will not complete until as much has been completed with
            /// [`complete_tx`](Self::complete_tx).
            ///
            /// If the count was negative (completions came first) and this
            /// brings it back to zero with no arrivals pending, this completes
            /// the phase.
            ///
            /// # Panics
            ///
            /// If the count would leave `-MAX_TX ..= MAX_TX`, if the
            #[doc = concat!($what, " is retired or poisoned, or inside this ", $what, "'s completion")]
            /// function.
            ///
            /// # Examples
            ///
            $(#[$expect_tx])*
            #[track_caller]
            pub fn expect_tx(&self, tx: u32) {
                self.$engine.expect_tx(tx)
            }

            /// Subtracts `tx` from the current phase's transaction count; this
            /// completes the phase if it brings the count to zero with no
            /// arrivals pending.
            ///
            /// # Panics
            ///
            /// As [`expect_tx`](Self::expect_tx).
            ///
            /// # Examples
            ///
            $(#[$complete_tx])*
            #[track_caller]
            pub fn complete_tx(&self, tx: u32) {
                self.$engine.complete_tx(tx)
            }

            #[doc = concat!("Poisons the ", $what, ", for a participant that failed: every thread")]
            /// waiting on it, and every later arrival, tx operation or wait,
            /// panics instead of hanging. The queries keep working. Idempotent.
            ///
            /// Called while a completion function runs (in it, or on another
            /// thread), it takes effect at once: `is_poisoned` is true, `Debug`
            /// says so, waits and joins panic. The function runs to its end,
            #[doc = concat!("and the phase then does not complete: the ", $what, " stays poisoned in")]
            /// it.
            ///
            /// # Examples
            ///
            $(#[$poison])*
            pub fn poison(&self) {
                self.$engine.poison()
            }

            #[doc = concat!("Whether the ", $what, " is poisoned (by [`poison`](Self::poison), a")]
            /// panicking completion function, or, for a [`Team`](crate::Team),
            /// a participant whose thread panicked). True as soon as `poison()`
            /// returned, also while a completion function still runs.
            ///
            /// # Examples
            ///
            $(#[$is_poisoned])*
            #[must_use]
            pub fn is_poisoned(&self) -> bool {
                self.$engine.is_poisoned()
            }
        }
    };
}

pub(crate) use engine_methods;
