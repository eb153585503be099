//! The pool's crew: pool threads that stay with the pool between launches,
//! so that a launch hands out its ranks with one store per few threads and
//! learns that they ended from one word (or a few counters), instead of
//! claiming each thread's slot and waiting on each in turn (LLVM OpenMP's
//! "hot team").
//!
//! A launch that finds the crew free (its lock is not held) takes it for
//! the whole launch: rank `r` runs on member `r - 1`. A launch that finds it
//! taken (another launch runs, or this is a launch from inside a kernel)
//! goes the slot way (`pool.rs`), so launches still never wait for each
//! other. The crew grows when a launch needs more members than it has: the
//! new members are pool threads (idle ones first, then spawned) handed an
//! enlisting ticket, whose rank is a member's service until it leaves.
//!
//! Members are in groups of [`GROUP`]; each group has two words, each on
//! its own cache line:
//!
//! - **go**: `generation << 24 | taking << 16 | parked`, with the
//!   launch's post (job, rank function, size) beside it on the line. A
//!   launch writes the post, then replaces the word (one CAS) with a new
//!   generation that says how many of the group's members take part
//!   (`Release`: the post and the job were written before). The members
//!   wait on it through `wait/` (spin, yield, park), as a barrier's waiters
//!   wait on its word, each with a parked bit of its own (`parked`, one bit
//!   per place in the group) and a parking key of its own: the launch
//!   clears the bits of the members it takes and wakes those that had one,
//!   and leaves a sleeper it does not take asleep, its bit set, so that a
//!   smaller launch pays no wake-up for the members it does not need.
//! - **done**: a count (`<< 1 | PARKED`) of the ranks this group ran. A
//!   member that ran a rank adds one (`Release`: its outcome was written
//!   before); the join waits until every group posted to has counted its
//!   members (`Acquire`). The member touches nothing of the launch after
//!   its add.
//!
//! A launch's own blocks tell it sooner that its ranks have ended: it
//! syncs on barriers the crew keeps (`crew/kept.rs`), which the last rank's
//! leave retires, and waits for that instead of the join. The join remains
//! for a poisoned launch (whose barriers never retire), before kept
//! barriers are dropped (a launch of another shape, a block whose tiles
//! were made), and for a launch that brings no barriers
//! of the crew's (`Pool::run`).
//!
//! **The post is read only by the members that take part,** before their
//! rank runs; the launch writes the next post only after its join has seen
//! every add, or after it saw its barriers retire (every rank's leave comes
//! after its read). So each write of a post happens after every read of
//! the previous one (the `Release` adds or leaves, and the `Acquire` that
//! saw them), and the members that do not take part read nothing but the
//! go word.
//!
//! **Leaving.** A member whose keep-alive passes without a launch that
//! takes it leaves the crew, and the crew keeps only the members before it:
//! a launch takes a prefix of the members, so every later one sat idle at
//! least as long. It does so under the crew's lock (never waiting for it:
//! a launch holds it while it runs, and might be waiting for this very
//! member): holding it, it knows no launch is under way. It marks each
//! leaver's own `left` flag, then wakes their groups with a new generation
//! that takes nobody (`Release`: the flags were written before); the
//! pool's shut-down does the same for every member. A member checks its
//! flag whenever its go word moves, before anything else: so a member that
//! slept through its leave and wakes to a later launch's generation (one
//! that a thread enlisted in its place takes part in) leaves instead of
//! running a rank twice. A member that leaves ends its service, and its
//! thread leaves the pool.

use super::slot::Ticket;
#[cfg(feature = "bench")]
use words::MAX_GROUP;
use words::{generation, places, taking, Group, Place, Post, PARKED};

mod kept;
mod words;
use super::Pool;
use crate::sync::{AtomicBool, Ordering, UnsafeCell};
use crate::wait::{self, Stages, Word};
pub(in crate::launch) use kept::Kept;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

/// Members per go word: a launch makes one CAS per group, and a go
/// word's line is read by this many members when it changes
/// (benches/RESULTS.md, "Launch").
const GROUP: usize = 4;

/// The group size of crews made from now on (the launch bench compares
/// sizes; a hint read once per crew, so a plain std atomic).
#[cfg(feature = "bench")]
static BENCH_GROUP: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(GROUP);

/// Sets the group size of the crews made from now on, in `1 ..= 16`
/// (feature `bench`: for the launch bench only).
#[cfg(feature = "bench")]
pub fn set_crew_group(members: usize) {
    assert!(
        (1..MAX_GROUP as usize).contains(&members),
        "a group of 1 ..= 16 members"
    );
    // Relaxed: a setting read by crews made later; no data rides on it.
    BENCH_GROUP.store(members, std::sync::atomic::Ordering::Relaxed);
}

/// The group size of a crew made now.
fn group_size() -> usize {
    #[cfg(feature = "bench")]
    {
        // Relaxed: as in `set_crew_group`.
        BENCH_GROUP.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(feature = "bench"))]
    GROUP
}

/// How long a member whose keep-alive passed while a launch held the crew
/// sleeps before it tries to leave again, at least: a launch takes about a
/// microsecond to post, so a member retrying sooner would only spin.
const RETRY: Duration = Duration::from_millis(1);

/// The crew: its members and their groups, behind the lock a launch holds
/// while it runs on them.
pub(super) struct Crew {
    /// Whether a thread holds `state` (a launch, a leaving member, the
    /// shut-down). Only ever tried, never waited for, except by the
    /// shut-down (which waits for a leaving member: no launch runs then).
    /// Not a `Mutex`: a mutex's `try_lock` under loom blocks the caller
    /// while another thread holds it, which would model a launch waiting
    /// for the member it waits for.
    held: AtomicBool,
    state: UnsafeCell<Roster>,
}

// SAFETY: `state` is only reached through a `Held` guard, which only the
// thread that swapped `held` from false to true has (Acquire), until it
// stores false (Release): one thread at a time, each after the last.
unsafe impl Sync for Crew {}
// SAFETY: as above; `Roster` holds `Arc`s of `Sync` types, numbers, and
// the kept barriers (`Send + Sync`, reached only by holders of the crew).
unsafe impl Send for Crew {}

// A holder leaves the state consistent at each point a panic can leave it
// (an enlisting launch catches the panics of its hand-out), as a poisoned
// lock taken as it is would be.
impl std::panic::RefUnwindSafe for Crew {}

/// The crew's state, held.
struct Held<'a> {
    crew: &'a Crew,
}

impl std::ops::Deref for Held<'_> {
    type Target = Roster;
    fn deref(&self) -> &Roster {
        // SAFETY: this guard holds the crew (`Crew`'s `Sync`).
        self.crew.state.with(|state| unsafe { &*state })
    }
}

impl std::ops::DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut Roster {
        // SAFETY: as `deref`, and the guard is borrowed mutably.
        self.crew.state.with_mut(|state| unsafe { &mut *state })
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        // Release: this holder's changes → the next holder's Acquire.
        self.crew.held.store(false, Ordering::Release);
    }
}

struct Roster {
    /// Members per group ([`GROUP`]).
    group: usize,
    /// Member `i` runs rank `i + 1`, in group `i / group`.
    members: Vec<Arc<Member>>,
    /// Never shrinks: a group outlives its members (they hold it too).
    groups: Vec<Arc<Group>>,
    /// Per group, the ranks its members owe in all launches so far: the
    /// count its done word reaches when they have all ended.
    owed: Vec<u64>,
    /// The last generation written to any go word.
    generation: u64,
    /// The barriers the last launch kept for the next one (`crew/kept.rs`).
    kept: Option<std::ptr::NonNull<Kept>>,
}

/// One member: its enlisting ticket and what its service needs.
struct Member {
    /// The ticket that enlisted this member's thread (its job is this
    /// member); it lives as long as the member, past the thread's last read.
    ticket: Ticket,
    group: Arc<Group>,
    crew: Arc<Crew>,
    /// Its place in the crew: it runs rank `index + 1`.
    index: usize,
    /// Its place in its group.
    place: u64,
    /// Set (by a holder of the crew) when it is told to leave.
    left: AtomicBool,
    /// Its group's generation when it enlisted.
    start: u64,
    keep_alive: Duration,
}

// SAFETY: the ticket's `slot` cell is written only by the launch that
// enlists the member, before the claim that hands the ticket over, and
// never read by another thread; its job pointer is this member's own
// address; the rest is `Sync`.
unsafe impl Sync for Member {}
// SAFETY: as above.
unsafe impl Send for Member {}

impl Crew {
    pub(super) fn new() -> Crew {
        Crew {
            held: AtomicBool::new(false),
            state: UnsafeCell::new(Roster {
                group: group_size(),
                members: Vec::new(),
                groups: Vec::new(),
                owed: Vec::new(),
                generation: 0,
                kept: None,
            }),
        }
    }

    /// The crew's state, unless another thread holds it.
    fn try_hold(&self) -> Option<Held<'_>> {
        // Acquire: the last holder's Release → its changes. Relaxed on
        // failure: nothing is read.
        self.held
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| Held { crew: self })
    }

    /// Tells every member to leave (the pool shuts down). No launch runs
    /// (they borrow the pool); a member leaving holds the crew briefly.
    pub(super) fn disband(&self) {
        loop {
            if let Some(mut state) = self.try_hold() {
                state.truncate(0);
                return;
            }
            crate::sync::yield_now();
        }
    }

    /// `member`'s keep-alive passed: it leaves the crew with every member
    /// after it (unless it left already), if no launch holds the crew.
    /// False: serve on.
    fn leave(&self, member: &Member) -> bool {
        let Some(mut state) = self.try_hold() else {
            return false;
        };
        // Relaxed: only holders of the crew write the flag, and we hold it.
        if !member.left.load(Ordering::Relaxed) {
            crate::sync::model_event("crew-member-left");
            state.truncate(member.index);
        }
        true
    }
}

impl Roster {
    /// Tells members `from ..` to leave and forgets them.
    fn truncate(&mut self, from: usize) {
        let (len, group) = (self.members.len(), self.group);
        for member in self.members.get(from..).unwrap_or_default() {
            // Relaxed: published by the CASes below (and by every later
            // holder's, which happen after our release of the crew).
            member.left.store(true, Ordering::Relaxed);
        }
        for g in from / group..len.div_ceil(group) {
            self.generation += 1;
            // A generation that takes nobody, waking the leavers.
            let first = if g == from / group { from % group } else { 0 };
            let leavers = places(group as u64) & !places(first as u64);
            // Release: the leavers' flags → their Acquire load of the word.
            self.groups[g]
                .go
                .publish(self.generation, 0, leavers, Ordering::Release);
        }
        self.members.truncate(from);
    }

    /// Runs a launch of `threads` threads on members `0 .. threads - 1`,
    /// rank 0 on this thread, and returns once every rank ended: once
    /// `ended` (given the wait's participant count) has seen them end, or
    /// if it returns false, once the join has.
    ///
    /// # Safety
    ///
    /// As `Pool::run`'s, and the crew has `threads - 1` members. If `ended`
    /// returns true, every rank has made its last access to the job and to
    /// the post (all but leaving the functions it is in), seen by this
    /// thread (`Acquire`).
    unsafe fn launch(
        &mut self,
        threads: usize,
        job: *const (),
        run: unsafe fn(*const (), usize),
        crowded: bool,
        ended: &dyn Fn(u32) -> bool,
    ) {
        let members = threads - 1;
        debug_assert!(self.members.len() >= members);
        self.generation += 1;
        let group = self.group;
        let groups = members.div_ceil(group);
        for g in 0..groups {
            let taking = (members - g * group).min(group);
            let group = &self.groups[g];
            // SAFETY: no member reads this post now: those of the last
            // launch read it before their done add, which this thread's
            // join saw, or before their leave of the kept barriers, whose
            // retirement it saw (module docs); the others read only the word.
            group.go.post.with_mut(|post| unsafe {
                *post = Post {
                    job,
                    run,
                    threads,
                    crowded,
                }
            });
            self.owed[g] += taking as u64;
            let taking = taking as u64;
            // Release: the post and the job → the members' Acquire load.
            let prior =
                group
                    .go
                    .publish(self.generation, taking, places(taking), Ordering::Release);
            if prior & places(taking) != 0 {
                crate::sync::model_event("crew-woke-a-sleeping-member");
            }
        }
        let participants = participants(threads, crowded);
        // Should rank 0 unwind after all (its rank function must not), the
        // ranks handed out end before the job goes.
        let unwinding = JoinOnUnwind {
            roster: self,
            groups,
            participants,
        };
        // SAFETY: the caller's promise, for rank 0 on this thread.
        unsafe { run(job, 0) };
        std::mem::forget(unwinding);
        if !ended(participants) {
            self.join(groups, participants);
        }
    }

    /// Waits until groups `0 .. groups` have counted every rank posted to
    /// them: every rank of every launch so far has returned.
    fn join(&self, groups: usize, participants: u32) {
        let mut waiter = None;
        for g in 0..groups {
            let done = &*self.groups[g].done;
            let owed = self.owed[g];
            let ended = |s: u64| (s >> 1 >= owed).then_some(s);
            // Acquire: the members' Release adds → their outcomes, read
            // after the launch returns.
            let s = done.word.load(Ordering::Acquire);
            let s = match ended(s) {
                Some(s) => s,
                None => waiter
                    .get_or_insert_with(|| Stages::new(participants, None))
                    .wait(done, s, ended)
                    .unwrap_or_else(|_| unreachable!("a wait without a deadline")),
            };
            if s & PARKED != 0 {
                crate::sync::model_event("crew-join-slept");
                // Relaxed: only this thread sets the bit, and nothing rides
                // on clearing it (a member's later add would wake nobody).
                done.word.fetch_and(!PARKED, Ordering::Relaxed);
            }
        }
    }
}

/// Joins the groups a launch posted to, when dropped: only while rank 0
/// unwinds (otherwise forgotten).
struct JoinOnUnwind<'a> {
    roster: &'a Roster,
    groups: usize,
    participants: u32,
}

impl Drop for JoinOnUnwind<'_> {
    fn drop(&mut self) {
        self.roster.join(self.groups, self.participants);
    }
}

/// The participant count of a launch's waits: as many as it has threads,
/// unless the launches under way hold more threads than there are cores.
fn participants(threads: usize, crowded: bool) -> u32 {
    if crowded {
        u32::MAX
    } else {
        threads as u32
    }
}

impl Pool {
    /// Runs the launch on the crew if it is free and has (or can get)
    /// `threads - 1` members; false, having started nothing, if not.
    ///
    /// # Safety
    ///
    /// As `Pool::run`'s.
    #[cfg(any(test, feature = "bench"))]
    pub(super) unsafe fn run_on_crew(
        &self,
        threads: usize,
        job: *const (),
        run: unsafe fn(*const (), usize),
        crowded: bool,
    ) -> bool {
        let Some(mut state) = self.crew.try_hold() else {
            crate::sync::model_event("crew-taken");
            return false;
        };
        if state.members.len() < threads - 1 && !self.enlist(&mut state, threads - 1) {
            return false;
        }
        // SAFETY: the caller's promise; the crew has the members; the pool
        // joins.
        unsafe { state.launch(threads, job, run, crowded, &|_| false) };
        true
    }

    /// Grows the crew to `wanted` members; false if a thread could not be
    /// had (the members enlisted stay).
    fn enlist(&self, state: &mut Roster, wanted: usize) -> bool {
        let first = state.members.len();
        let size = state.group;
        while state.groups.len() < wanted.div_ceil(size) {
            state.groups.push(Arc::new(Group::new()));
            state.owed.push(0);
        }
        let recruits: Vec<Arc<Member>> = (first..wanted)
            .map(|index| {
                let group = Arc::clone(&state.groups[index / size]);
                // Relaxed: the word is stable (only holders of the lock
                // change its generation), and nothing is read through it.
                let start = generation(group.go.word.load(Ordering::Relaxed));
                Arc::new_cyclic(|me: &std::sync::Weak<Member>| Member {
                    ticket: Ticket {
                        job: me.as_ptr().cast(),
                        run: serve,
                        rank: index + 1,
                        crowded: false,
                        enlists: true,
                        slot: Cell::new(ptr::null()),
                    },
                    group,
                    crew: Arc::clone(&self.crew),
                    index,
                    place: (index % size) as u64,
                    left: AtomicBool::new(false),
                    start,
                    keep_alive: self.config.keep_alive,
                })
            })
            .collect();
        // Each recruit's thread owns a reference from its first read of
        // the ticket: given before the claim, taken back if unclaimed.
        for recruit in &recruits {
            std::mem::forget(Arc::clone(recruit));
        }
        let mut claimed = 0;
        let handed = panic::catch_unwind(AssertUnwindSafe(|| {
            self.claim_or_spawn(recruits.len(), |i| &recruits[i].ticket, &mut claimed)
        }));
        for unclaimed in &recruits[claimed..] {
            // SAFETY: the reference forgotten above, which no thread took.
            drop(unsafe { Arc::from_raw(Arc::as_ptr(unclaimed)) });
        }
        let grown = matches!(handed, Ok(None));
        state.members.extend(recruits.into_iter().take(claimed));
        grown
    }
}

/// An enlisted thread's rank: serves as member `job` until it leaves.
///
/// # Safety
///
/// `job` is a `Member` whose reference was given to this thread
/// (`Pool::enlist`).
unsafe fn serve(job: *const (), _rank: usize) {
    // SAFETY: the caller's promise.
    let member = unsafe { Arc::from_raw(job.cast::<Member>()) };
    member.serve();
}

impl Member {
    /// When this member, idle from now on, leaves: after its idle wait's
    /// spin and yield stages and then the keep-alive (`None`: never).
    fn idle_until(&self) -> Option<std::time::Instant> {
        wait::deadline_after(self.keep_alive.saturating_add(wait::IDLE_POLL))
    }

    /// Waits for launches and runs their ranks until told to leave or the
    /// keep-alive passes.
    fn serve(&self) {
        let group = &*self.group;
        let place = self.place;
        let view = Place {
            go: &group.go,
            place,
        };
        let mut seen = self.start;
        let mut deadline = self.idle_until();
        let mut waiter = Stages::idle(true, deadline);
        // Just back from a rank (for the models' cases).
        let mut returning = false;
        loop {
            let moved = |(s, _): (u64, u64)| (generation(s) != seen).then_some(s);
            // Acquire: the launch's Release CAS → its post and job.
            let s = view.load(Ordering::Acquire);
            if returning && moved(s).is_some() {
                // The launch it served ended (its barriers retired) and the
                // next one was posted while this member was on its way back.
                crate::sync::model_event("crew-member-back-after-the-next-post");
            }
            returning = false;
            let got = match moved(s) {
                Some(s) => Ok(s),
                None => waiter.wait(&view, s, moved),
            };
            let Ok(s) = got else {
                // The keep-alive passed.
                if self.crew.leave(self) {
                    return;
                }
                // A launch holds the crew (it may be about to wake this
                // member): try again after another keep-alive, and not
                // sooner than `RETRY`, so that a zero keep-alive does not
                // spin against the launch. (Under the models, whose clock
                // moves a millisecond per reading, the member sleeps until
                // the holder wakes it: a missing wake is a deadlock there.)
                deadline = if crate::sync::MODEL {
                    None
                } else {
                    wait::deadline_after(self.keep_alive.max(RETRY))
                };
                waiter = Stages::asleep(deadline);
                continue;
            };
            seen = generation(s);
            // Relaxed: the Acquire load of the word that moved read the
            // CAS that followed the flag's store, or a later one.
            if self.left.load(Ordering::Relaxed) {
                return;
            }
            if place < taking(s) {
                // SAFETY: this member takes part: the post is this
                // launch's until this member's rank has run (module docs).
                let post = group.go.post.with(|post| unsafe { *post });
                // SAFETY: the launch promised that each rank may run on any
                // thread while it waits (`Pool::run`), and its rank
                // `index + 1` is this member's alone.
                unsafe { (post.run)(post.job, self.index + 1) };
                // Release: this rank's outcome → the launch's join.
                let prior = group.done.word.fetch_add(2, Ordering::Release);
                wait::wake(&*group.done, prior);
                returning = true;
                deadline = self.idle_until();
                waiter = Stages::idle(
                    !post.crowded && post.threads as u32 <= wait::cores(),
                    deadline,
                );
                continue;
            }
            // Woken for a launch that did not take this member: back to
            // sleep, keeping the deadline.
            waiter = Stages::asleep(deadline);
        }
    }
}
