//! Tasks waiting on a word: the async counterpart of the parking lot.
//!
//! A table of [`BUCKETS`] buckets, allocated once (a `static`), each a small
//! lock and an intrusive doubly-linked list of [`TaskNode`]s. A node lives
//! inside a pinned wait future, so a pending wait allocates nothing; it is
//! keyed by the same address as the threads parked on the word
//! (`Word::park_key`), and the bucket is a hash of that key.
//!
//! The contract mirrors the threads' backend (`park/mod.rs`):
//! - [`TaskNode::register`] runs `validate` with the bucket locked and links
//!   the node (with a clone of the waker) only if it returns `true`; a node
//!   already linked just gets the latest waker.
//! - [`wake_all`] takes the same lock, so a `wake_all` that follows a change
//!   of the word either finds the node linked or makes its `validate` see the
//!   change. It unlinks every node of the key that was linked before it began
//!   (a node linked later waits for a later change), and wakes their wakers
//!   after unlocking, [`BATCH`] at a time. A waker that panics does not
//!   stop the others: its panic comes out of `wake_all` after they all ran.
//! - Nothing foreign runs under a bucket lock: wakers are cloned before
//!   locking and woken or dropped after unlocking, so a waker's code can
//!   neither deadlock on the bucket nor panic with it held.
//!
//! # Unlinking, and dropping a node that is being woken
//!
//! Every field shared by a node and the table is only touched with the bucket
//! locked, except the node's `queued` flag. The waker unlinks a node, takes its
//! waker, and clears `queued` (`Release`) as its last touch of the node, all
//! under the lock. The owner (a poll that is done, or the future's drop) reads
//! `queued` (`Acquire`): `false` means nobody will touch the node again, and
//! it may go at once; `true` means it may still be linked, so the owner locks
//! the bucket and unlinks it if it still is. Either way the lock, or the
//! `Release`/`Acquire` pair, orders the waker's last access before the node's
//! memory is reused.
//!
//! Under `--cfg loom` the lock is the parking model's lock (loom atomics and
//! `thread::park`, see `model_loom.rs` for why not loom's `Mutex`) and the table has
//! one bucket; under `--cfg shuttle` a shuttle `Mutex`, one bucket.

use crate::sync::{AtomicBool, Ordering, UnsafeCell};
#[cfg(not(loom))]
use crate::sync::{Mutex, MutexGuard};
use std::any::Any;
use std::marker::PhantomPinned;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr;
use std::task::Waker;

/// Buckets of the table. Collisions only cost a scan past the other keys'
/// nodes; 64 buckets of 128 bytes (cache-padded) are 8 KiB of static memory.
#[cfg(not(any(loom, shuttle)))]
const BUCKETS: usize = 64;
#[cfg(any(loom, shuttle))]
const BUCKETS: usize = 1;

/// Wakers collected under one lock before they are woken (on the stack:
/// 32 × 16 bytes), as tokio's `Notify` does.
const BATCH: usize = 32;

/// A task's place in the table: lives in a pinned wait future, is linked
/// while the task waits, and unlinks itself when dropped.
pub(crate) struct TaskNode {
    /// The park key of the word this node waits on; fixed at construction.
    key: usize,
    /// Whether the node may be linked (see the module docs). Written with
    /// the bucket locked; read without it by the owner.
    queued: AtomicBool,
    /// Only touched with the bucket of `key` locked.
    links: UnsafeCell<Links>,
    /// The table points at linked nodes: they must not move.
    _pinned: PhantomPinned,
}

struct Links {
    prev: *const TaskNode,
    next: *const TaskNode,
    /// The bucket's `epoch` when the node was linked: a `wake_all` that began
    /// before that leaves the node alone.
    epoch: u64,
    /// The waker of the latest poll.
    waker: Option<Waker>,
}

// SAFETY: the raw pointers and the waker in `links` are only touched with the
// bucket lock held (module docs), whichever thread the owner is on; `key` is
// immutable and `queued` is atomic. A shared `&TaskNode` gives access to
// nothing else.
unsafe impl Send for TaskNode {}
// SAFETY: as above.
unsafe impl Sync for TaskNode {}

/// A bucket's list, in link order (so epochs never decrease from head to tail).
struct List {
    head: *const TaskNode,
    tail: *const TaskNode,
    /// How many `wake_all` passes began on this bucket.
    epoch: u64,
}

struct Bucket {
    lock: BucketLock,
    list: UnsafeCell<List>,
}

// SAFETY: `list`, and the links of every node it reaches, are only touched
// with `lock` held.
unsafe impl Sync for Bucket {}

impl Bucket {
    crate::sync::const_unless_model! {
        fn new() -> Bucket {
            Bucket {
                lock: BucketLock::new(),
                list: UnsafeCell::new(List {
                    head: ptr::null(),
                    tail: ptr::null(),
                    epoch: 0,
                }),
            }
        }
    }
}

/// The bucket of `key` (Fibonacci hashing, as parking_lot's table).
fn bucket(key: usize) -> &'static Bucket {
    #[cfg(not(any(loom, shuttle)))]
    {
        static TABLE: [crossbeam_utils::CachePadded<Bucket>; BUCKETS] =
            [const { crossbeam_utils::CachePadded::new(Bucket::new()) }; BUCKETS];
        const SHIFT: u32 = usize::BITS - BUCKETS.trailing_zeros();
        &TABLE[(key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize >> SHIFT]
    }
    #[cfg(any(loom, shuttle))]
    {
        let _ = key;
        &TABLE
    }
}

#[cfg(loom)]
loom::lazy_static! {
    static ref TABLE: Bucket = Bucket::new();
}

#[cfg(shuttle)]
shuttle::lazy_static! {
    static ref TABLE: Bucket = Bucket::new();
}

crate::assert::const_assert!(BUCKETS.is_power_of_two());

impl TaskNode {
    /// An unlinked node for the word whose park key is `key`.
    pub(crate) fn new(key: usize) -> TaskNode {
        TaskNode {
            key,
            queued: AtomicBool::new(false),
            links: UnsafeCell::new(Links {
                prev: ptr::null(),
                next: ptr::null(),
                epoch: 0,
                waker: None,
            }),
            _pinned: PhantomPinned,
        }
    }

    pub(crate) fn key(&self) -> usize {
        self.key
    }

    /// Registers the task, or refreshes its waker if the node is linked.
    /// `validate` runs with the bucket locked when the node is not linked:
    /// the node is linked only if it returns `true`. Returns whether the node
    /// is linked now (with `waker`, or one that wakes the same task).
    pub(crate) fn register(self: Pin<&Self>, waker: &Waker, validate: impl Fn() -> bool) -> bool {
        let bucket = bucket(self.key);
        // Cloned before locking: no foreign code runs under the lock. A node
        // that is (probably) linked first checks whether its waker will do.
        // Relaxed: only whether to clone before locking, and nothing is read
        // on its strength: the lock-held load below decides. A stale `false`
        // costs a clone too many, a stale `true` one more trip round the loop.
        let mut fresh = (!self.queued.load(Ordering::Relaxed)).then(|| waker.clone());
        loop {
            let guard = bucket.lock.lock();
            // Relaxed: every store of `queued` is made under the lock we hold (orderings.md).
            let linked = self.queued.load(Ordering::Relaxed);
            if !linked && !validate() {
                drop(guard);
                return false;
            }
            // SAFETY: the bucket is locked.
            let same = linked
                && unsafe {
                    self.with_links(|l| l.waker.as_ref().is_some_and(|w| w.will_wake(waker)))
                };
            if same {
                return true;
            }
            let Some(new) = fresh.take() else {
                drop(guard);
                fresh = Some(waker.clone());
                continue;
            };
            let old = if linked {
                // SAFETY: the bucket is locked.
                unsafe { self.with_links(|l| l.waker.replace(new)) }
            } else {
                // SAFETY: the bucket is locked, and `self` is pinned: it stays
                // where the list points until it is unlinked (at the latest by
                // its own drop).
                unsafe { bucket.push(self.get_ref(), new) };
                None
            };
            drop(guard);
            drop(old);
            return true;
        }
    }

    /// Unlinks the node if it is still linked; afterwards no `wake_all`
    /// touches it.
    pub(crate) fn deregister(self: Pin<&Self>) {
        // Acquire: the unlinker's last access to the node → our return (orderings.md).
        if !self.queued.load(Ordering::Acquire) {
            return;
        }
        let bucket = bucket(self.key);
        let guard = bucket.lock.lock();
        // Relaxed: as in `register`, the lock orders every store before it.
        let waker = if self.queued.load(Ordering::Relaxed) {
            // SAFETY: the bucket is locked and the node is in its list.
            unsafe { bucket.unlink(self.get_ref()) }
        } else {
            None
        };
        drop(guard);
        drop(waker);
    }

    /// Runs `f` on the links.
    ///
    /// # Safety
    ///
    /// The bucket of `self.key` is locked, and `f` does not reach these
    /// links again.
    unsafe fn with_links<R>(&self, f: impl FnOnce(&mut Links) -> R) -> R {
        // SAFETY: every access to `links` holds the bucket lock (caller), so
        // this one is exclusive.
        self.links.with_mut(|l| f(unsafe { &mut *l }))
    }
}

impl Drop for TaskNode {
    fn drop(&mut self) {
        // SAFETY: a node is only linked through `register`, which takes it
        // pinned; pinned data is dropped in place, so this is where it was.
        let node = unsafe { Pin::new_unchecked(&*self) };
        node.deregister();
        // Unlinked: nothing else reaches the links now, so they are ours
        // without the lock (under loom, this access is checked against the
        // last unlinker's, which must happen-before it).
        // SAFETY: as just said.
        let clean = self.links.with_mut(|l| unsafe {
            (*l).waker.is_none() && (*l).prev.is_null() && (*l).next.is_null()
        });
        debug_assert!(clean, "a dropped task node was still linked");
    }
}

impl Bucket {
    /// Links `node` at the tail with `waker`.
    ///
    /// # Safety
    ///
    /// The bucket is locked, `node` is not linked, and it stays at its
    /// address until it is unlinked.
    unsafe fn push(&self, node: &TaskNode, waker: Waker) {
        let me: *const TaskNode = node;
        self.list.with_mut(|list| {
            // SAFETY: the bucket is locked (caller), so the list is ours.
            let list = unsafe { &mut *list };
            let tail = list.tail;
            // SAFETY: the bucket is locked.
            unsafe {
                node.with_links(|l| {
                    l.prev = tail;
                    l.next = ptr::null();
                    l.epoch = list.epoch;
                    l.waker = Some(waker);
                });
            }
            if tail.is_null() {
                list.head = me;
            } else {
                // SAFETY: a linked node is alive (it unlinks itself before it
                // goes), and the bucket is locked.
                unsafe { (*tail).with_links(|l| l.next = me) };
            }
            list.tail = me;
        });
        // Relaxed: `true` hands nothing over; the unlinker's `false` is the Release (orderings.md).
        node.queued.store(true, Ordering::Relaxed);
    }

    /// Unlinks `node` and returns its waker; the last access to `node`.
    ///
    /// # Safety
    ///
    /// The bucket is locked and `node` is in its list.
    unsafe fn unlink(&self, node: &TaskNode) -> Option<Waker> {
        // SAFETY: the bucket is locked (caller).
        let (prev, next, waker) = unsafe {
            node.with_links(|l| {
                let links = (l.prev, l.next, l.waker.take());
                l.prev = ptr::null();
                l.next = ptr::null();
                links
            })
        };
        self.list.with_mut(|list| {
            // SAFETY: the bucket is locked (caller).
            let list = unsafe { &mut *list };
            if prev.is_null() {
                list.head = next;
            } else {
                // SAFETY: linked nodes are alive, and the bucket is locked.
                unsafe { (*prev).with_links(|l| l.next = next) };
            }
            if next.is_null() {
                list.tail = prev;
            } else {
                // SAFETY: as above.
                unsafe { (*next).with_links(|l| l.prev = prev) };
            }
        });
        // Release: our accesses to the node → the owner letting it go (orderings.md).
        node.queued.store(false, Ordering::Release);
        waker
    }
}

/// Wakes every task whose node was linked under `key` before this call:
/// unlinks them with the bucket locked, and wakes their wakers after
/// unlocking, [`BATCH`] at a time. Waking a key nobody waits on is harmless,
/// even after the word is gone.
///
/// A waker whose `wake` panics (std's contract says it should not) costs no
/// other task its wake-up: each `wake` runs under `catch_unwind`, every
/// other waker of this call (every batch) is still woken, and then the first
/// panic is resumed (`resume_unwind`: it went through the panic hook when it
/// happened), out of the operation that woke, unless this thread is
/// unwinding already (then it is dropped). The table is consistent
/// throughout: every node was unlinked under the lock before its waker ran.
pub(crate) fn wake_all(key: usize) {
    let bucket = bucket(key);
    let mut epoch = None;
    let mut panicked: Option<Box<dyn Any + Send>> = None;
    loop {
        let mut batch: [Option<Waker>; BATCH] = Default::default();
        let mut taken = 0;
        let mut more = false;
        let guard = bucket.lock.lock();
        // SAFETY: the bucket is locked.
        let (head, e) = bucket.list.with_mut(|list| unsafe {
            let list = &mut *list;
            let e = *epoch.get_or_insert_with(|| {
                list.epoch += 1;
                list.epoch - 1
            });
            (list.head, e)
        });
        let mut node = head;
        while !node.is_null() {
            // SAFETY: linked nodes are alive, and the bucket is locked.
            let n = unsafe { &*node };
            // SAFETY: the bucket is locked.
            let (next, linked_at) = unsafe { n.with_links(|l| (l.next, l.epoch)) };
            if linked_at > e {
                break; // this node and all after it were linked after we began
            }
            if n.key == key {
                if taken == BATCH {
                    more = true;
                    break;
                }
                // SAFETY: the bucket is locked and `n` is in its list.
                batch[taken] = unsafe { bucket.unlink(n) };
                taken += 1;
            }
            node = next;
        }
        drop(guard);
        for waker in batch.iter_mut().filter_map(Option::take) {
            // The waker is consumed whether or not `wake` returns, and
            // nothing of ours is left half done across it: asserting unwind
            // safety is sound.
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| waker.wake())) {
                // A later panic's payload is dropped: one is resumed.
                panicked.get_or_insert(payload);
            }
        }
        if !more {
            break;
        }
    }
    // Not while this thread unwinds already (a completion function that
    // panicked wakes on its way out): that would abort. The waker's panic
    // was reported by the hook when it happened; the unwinding goes on.
    if let Some(payload) = panicked {
        if !std::thread::panicking() {
            panic::resume_unwind(payload);
        }
    }
}

/// The bucket lock: std's `Mutex` (futex-based, `const`) in normal builds,
/// shuttle's under `--cfg shuttle` (`sync::Mutex`). Nothing that can panic
/// runs under it, so it is never poisoned; a poisoned one would still hold a
/// consistent list.
#[cfg(not(loom))]
struct BucketLock(Mutex<()>);

#[cfg(not(loom))]
impl BucketLock {
    crate::sync::const_unless_model! {
        fn new() -> BucketLock {
            BucketLock(Mutex::new(()))
        }
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Under loom: the parking model's lock, unlocked by a guard.
#[cfg(loom)]
struct BucketLock(super::model_loom::Lock);

#[cfg(loom)]
struct BucketGuard<'a>(&'a super::model_loom::Lock);

#[cfg(loom)]
impl Drop for BucketGuard<'_> {
    fn drop(&mut self) {
        self.0.unlock();
    }
}

#[cfg(loom)]
impl BucketLock {
    fn new() -> BucketLock {
        BucketLock(super::model_loom::Lock::new())
    }

    fn lock(&self) -> BucketGuard<'_> {
        self.0.lock();
        BucketGuard(&self.0)
    }
}
