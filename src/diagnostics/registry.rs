//! Recording the waits: each thread's slot in the slot list (`slots.rs`) and
//! how a blocking or async wait is written into it.
//!
//! A thread takes a slot on its first blocking wait and keeps it in a
//! thread-local until it exits; the slot then goes back to the slot list for the
//! next thread (so a program that spawns threads in a loop, as `launch`
//! does, keeps as many slots as it had threads alive at once). A blocking
//! wait is recorded only once it stops spinning (it yields or parks: it has
//! waited for microseconds already, and yielding or parking costs more than
//! the record): a clock read, a thread-local, a few stores and one CAS on
//! the thread's own slot. A wait that ends while spinning records nothing.
//! The slot list's lock is taken only to hand out a slot, by an async wait that
//! found its phase incomplete, and by the reader.
//!
//! Under the model
//! checkers (`--cfg loom` / `--cfg shuttle`) nothing is registered, since a
//! model's atomics cannot outlive one execution; the slot's protocol has its
//! own loom model (`slot.rs`).

use super::slot::{About, Wait, WaiterSlot};
use super::slots::{self, unclaim};
use super::subject::{Subject, WaitInfo, Who};
use crate::sync::thread_local;
use std::cell::Cell;
use std::panic::Location;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// Takes a slot of the slot list for `owner`, first starting the stall-report
/// monitor if the environment asks for it (a wait is about to be recorded).
fn claim(owner: (String, bool)) -> &'static WaiterSlot {
    super::monitor::start_if_asked();
    slots::claim(owner)
}

/// The name of the calling thread for the report: its name, else its id as
/// Rust writes it (`ThreadId(7)`, which `thread::current().id()` prints
/// too, so the user can tell which of their threads it is).
fn thread_name() -> (String, bool) {
    let thread = std::thread::current();
    match thread.name() {
        Some(name) => (name.to_owned(), true),
        None => (format!("{:?}", thread.id()), false),
    }
}

/// A thread's record keeping, in one thread-local: its slot (returned to
/// the slot list when the thread exits), a higher layer's description of the
/// wait it is about to make ([`describe_as`]), and whether its slot holds a
/// wait now (a wait inside a wait, which should not happen, is then not
/// recorded).
struct Local {
    slot: Cell<Option<&'static WaiterSlot>>,
    describe_as: Cell<Option<Override>>,
    waiting: Cell<bool>,
}

impl Drop for Local {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.get() {
            unclaim(slot);
        }
    }
}

thread_local! {
    static LOCAL: Local = const {
        Local {
            slot: Cell::new(None),
            describe_as: Cell::new(None),
            waiting: Cell::new(false),
        }
    };
}

/// How a higher layer (a block's sync, a grid's) describes the wait
/// on its word that it is about to make: the word's key, itself, and its
/// caller's call site.
#[derive(Clone, Copy)]
struct Override {
    key: usize,
    subject: Subject,
    location: &'static Location<'static>,
    who: Option<Who>,
}

/// Until the guard drops, a blocking wait of this thread on the word keyed
/// `key` is recorded as a wait on `subject` from `location` by `who` (a
/// seat's rank) instead of as the lower layer describes it (a wait on
/// another word is not affected).
/// The outermost description stands.
#[must_use]
pub(crate) struct DescribeAs(bool);

pub(crate) fn describe_as(
    key: usize,
    subject: Subject,
    location: &'static Location<'static>,
    who: Option<Who>,
) -> DescribeAs {
    let new = Override {
        key,
        subject,
        location,
        who,
    };
    let set = LOCAL
        .try_with(|l| l.describe_as.get().is_none() && l.describe_as.replace(Some(new)).is_none());
    DescribeAs(matches!(set, Ok(true)))
}

impl Drop for DescribeAs {
    fn drop(&mut self) {
        if self.0 {
            let _ = LOCAL.try_with(|l| l.describe_as.set(None));
        }
    }
}

/// A blocking wait's record, held by the wait (`wait.rs`'s `Waiter`): not
/// begun while the wait spins (a wait that ends there costs no clock read
/// and touches no thread-local), begun when it yields or parks, ended when
/// it is dropped.
#[derive(Default)]
pub(crate) enum Record {
    #[default]
    Off,
    Pending(WaitInfo),
    Begun(Option<&'static WaiterSlot>),
}

impl Record {
    pub(crate) fn new(info: WaitInfo) -> Record {
        Record::Pending(info)
    }

    /// The wait stopped spinning: records it (once), unless a higher layer
    /// described the wait on this word first ([`describe_as`]): then as that.
    #[cold]
    pub(crate) fn begin(&mut self) {
        if let Record::Pending(info) = *self {
            *self = Record::Begun(thread_wait(info));
        }
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        if let Record::Begun(Some(slot)) = *self {
            slot.end();
            let _ = LOCAL.try_with(|l| l.waiting.set(false));
        }
    }
}

/// Records a blocking wait of this thread (module docs); `None` if not
/// recorded (a model checker's build, a thread that is exiting, a wait
/// inside a wait).
fn thread_wait(info: WaitInfo) -> Option<&'static WaiterSlot> {
    if crate::sync::MODEL {
        return None;
    }
    let WaitInfo {
        key,
        tag,
        phase,
        who,
        subject,
        location,
    } = info;
    let slot = LOCAL.try_with(|l| {
        if l.waiting.replace(true) {
            return None;
        }
        let (subject, location, who) = match l.describe_as.get() {
            Some(o) if o.key == key => (o.subject, o.location, o.who.or(who)),
            _ => (subject, location, who),
        };
        let slot = match l.slot.get() {
            Some(slot) => slot,
            None => {
                let slot = claim(thread_name());
                l.slot.set(Some(slot));
                slot
            }
        };
        Some((slot, subject, location, who))
    });
    // None: the thread is exiting, or already waiting.
    let Ok(Some((slot, subject, location, who))) = slot else {
        return None;
    };
    slot.begin(Wait {
        key,
        tag,
        phase,
        who,
        about: About::Live(subject),
        location,
        since: Instant::now(),
    });
    Some(slot)
}

/// An async wait's record, kept in its future: begun when a poll finds the
/// phase incomplete, ended when the future completes or is dropped, and
/// never ended if the future is leaked, so it keeps what its subject said
/// of itself at that poll, not the subject (`slot.rs`'s module docs). (A
/// lock, not a `Cell`: the futures are `Sync`; only the poller takes it.)
#[derive(Default)]
pub(crate) struct TaskWait(Mutex<Option<&'static WaiterSlot>>);

impl TaskWait {
    /// After a poll: records the wait while `pending` (once), ends the
    /// record when not.
    ///
    /// # Safety
    ///
    /// `subject`'s object is alive for the call (the polled future borrows
    /// it).
    pub(crate) unsafe fn polled(
        &self,
        pending: bool,
        key: usize,
        phase: impl FnOnce() -> u64,
        subject: Subject,
        location: &'static Location<'static>,
    ) {
        if crate::sync::MODEL {
            return;
        }
        let mut mine = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match (*mine, pending) {
            (None, true) => {
                let phase = phase();
                // SAFETY: the caller's contract: the object is alive now.
                let described = unsafe { (subject.describe)(subject.ptr, 0, phase) };
                let slot = claim(("task".to_owned(), false));
                slot.begin(Wait {
                    key,
                    tag: 0,
                    phase,
                    who: None,
                    about: About::Taken {
                        level: subject.level,
                        described,
                    },
                    location,
                    since: Instant::now(),
                });
                *mine = Some(slot);
            }
            (Some(slot), false) => {
                *mine = None;
                slot.end();
                unclaim(slot);
            }
            _ => {}
        }
    }
}

impl Drop for TaskWait {
    fn drop(&mut self) {
        let mine = self.0.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(slot) = mine.take() {
            slot.end();
            unclaim(slot);
        }
    }
}

impl std::fmt::Debug for TaskWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TaskWait")
    }
}
