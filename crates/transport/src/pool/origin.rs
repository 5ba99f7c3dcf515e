//! An origin's share of a pool: the permits that cap its connections in use, and the idle
//! connections it keeps between requests. Idle connections are watched where their sockets are
//! registered, by one [`Keeper`] per home thread, so one the server closes is dropped at once and
//! the surplus above `max_free_sockets` is closed after [`SURPLUS_GRACE`]; an idle process gets
//! no timer from it otherwise.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};

use tokio::sync::Semaphore;
use tokio::time::{Instant, Sleep};

use super::{lock, SURPLUS_GRACE};
use crate::executor;
use crate::http1::Connection;
use crate::options::settings::PoolBounds;
use crate::timers::{self, Watched};

pub(super) struct OriginPool {
    pub(super) permits: Arc<Semaphore>,
    bounds: PoolBounds,
    idle: Mutex<Idle>,
    /// Requests waiting for a permit: a connection given back while one waits goes to it.
    pub(super) waiting: AtomicUsize,
}

/// An origin's idle connections and the keepers watching them.
#[derive(Default)]
struct Idle {
    /// Oldest first: a call takes the newest of its own home, the trim closes the oldest.
    connections: Vec<IdleConnection>,
    /// The homes whose [`Keeper`] runs, each with the waker that tells it a connection was added
    /// (None until it is first polled, and while it is being polled).
    keepers: Vec<(u32, Option<Waker>)>,
}

struct IdleConnection {
    /// The [`executor::home`] whose reactor watches the socket: a call takes only one of its own
    /// thread's, so it never waits on another thread's event loop.
    home: u32,
    since: Instant,
    connection: Connection,
}

impl OriginPool {
    pub(super) fn new(bounds: PoolBounds) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(bounds.max_sockets as usize)),
            bounds,
            idle: Mutex::default(),
            waiting: AtomicUsize::new(0),
        }
    }

    /// Keep a connection given back idle, and have its home's [`Keeper`] watch it.
    pub(super) fn keep(self: &Arc<Self>, home: u32, connection: Connection) {
        let mut idle = lock(&self.idle);
        // A connection a waiting request will take is not idle: hand it over rather than close
        // it and make that request dial a new one (as Node's agents do). `max_free_sockets: 0`
        // keeps no other, as with Node; otherwise up to `max_sockets`, all that can run at once.
        let waiting = self.waiting.load(Ordering::Acquire);
        let room = match self.bounds.max_free_sockets {
            0 => waiting,
            _ => waiting.max(self.bounds.max_sockets as usize),
        };
        if idle.connections.len() >= room {
            return; // the connection drops here, closing its socket
        }
        idle.connections.push(IdleConnection {
            home,
            since: Instant::now(),
            connection,
        });
        let keeper = idle.keepers.iter_mut().find(|(of, _)| *of == home);
        if let Some((_, waker)) = keeper {
            let waker = waker.take();
            drop(idle);
            if let Some(waker) = waker {
                waker.wake();
            }
            return;
        }
        idle.keepers.push((home, None));
        drop(idle);
        let keeper = Keeper {
            origin_pool: Arc::downgrade(self),
            home,
            trim: None,
        };
        if !executor::spawn(Box::pin(keeper)) {
            // Nowhere to watch it from (no runtime: never the case for a call): keep nothing.
            let mut idle = lock(&self.idle);
            idle.keepers.retain(|(of, _)| *of != home);
            idle.connections.retain(|kept| kept.home != home);
        }
    }

    /// The warmest idle connection of `home`.
    pub(super) fn take_idle(&self, home: u32) -> Option<Connection> {
        let mut idle = lock(&self.idle);
        let at = idle
            .connections
            .iter()
            .rposition(|kept| kept.home == home)?;
        Some(idle.connections.remove(at).connection)
    }

    /// One look of `home`'s [`Keeper`]: drop the connections the server closed, close those
    /// above `max_free_sockets` that stayed idle for [`SURPLUS_GRACE`] (oldest first), and say
    /// whether any is left to watch and when the next one ages out.
    fn tend(&self, home: u32, cx: &mut Context<'_>) -> Tended {
        let mut closed = Vec::new();
        let tended = {
            let mut idle = lock(&self.idle);
            let Idle {
                connections,
                keepers,
            } = &mut *idle;
            let mut at = 0;
            while at < connections.len() {
                let kept = &mut connections[at];
                if kept.home == home && kept.connection.poll_unusable(cx) {
                    closed.push(connections.remove(at));
                } else {
                    at += 1;
                }
            }
            let max_free = self.bounds.max_free_sockets as usize;
            let now = Instant::now();
            let oldest_of_home = |connections: &[IdleConnection]| {
                connections.iter().position(|kept| kept.home == home)
            };
            while connections.len() > max_free {
                match oldest_of_home(connections) {
                    Some(at) if connections[at].since + SURPLUS_GRACE <= now => {
                        closed.push(connections.remove(at));
                    }
                    _ => break,
                }
            }
            match oldest_of_home(connections) {
                None => {
                    keepers.retain(|(of, _)| *of != home);
                    Tended::Done
                }
                Some(oldest) => {
                    if let Some((_, waker)) = keepers.iter_mut().find(|(of, _)| *of == home) {
                        *waker = Some(cx.waker().clone());
                    }
                    Tended::Watching {
                        trim_at: (connections.len() > max_free)
                            .then(|| connections[oldest].since + SURPLUS_GRACE),
                    }
                }
            }
        };
        // Closed outside the lock: closing a socket is a system call.
        drop(closed);
        tended
    }

    /// Close every idle connection and stop the keepers (teardown).
    pub(super) fn close_idle(&self) {
        let Idle {
            connections,
            keepers,
        } = std::mem::take(&mut *lock(&self.idle));
        drop(connections);
        wake_keepers(keepers);
    }
}

impl Drop for OriginPool {
    fn drop(&mut self) {
        // Keepers hold the pool weakly: woken, they find it gone and end.
        let idle = std::mem::take(self.idle.get_mut().unwrap_or_else(|e| e.into_inner()));
        wake_keepers(idle.keepers);
    }
}

fn wake_keepers(keepers: Vec<(u32, Option<Waker>)>) {
    for waker in keepers.into_iter().filter_map(|(_, waker)| waker) {
        waker.wake();
    }
}

/// What a [`Keeper`] found.
enum Tended {
    /// Its home keeps no idle connection here any more.
    Done,
    /// It watches some; `trim_at`: when the oldest of them is due to be closed as surplus.
    Watching { trim_at: Option<Instant> },
}

/// Watches the idle connections one home keeps for an origin, on that home's own loop (where
/// their sockets are registered): a connection the server closes or resets is dropped, its
/// descriptor closed, as soon as the reactor reports it (Node's agents drop theirs on the
/// socket's `close`), rather than held until the host is used again. It runs while the home has
/// idle connections there and sleeps between events: an idle process gets no wake-up from it
/// (decisions D12), only one timer when a surplus is to be closed.
struct Keeper {
    origin_pool: Weak<OriginPool>,
    home: u32,
    /// Armed while the origin keeps more than `max_free_sockets` idle, for the instant given.
    trim: Option<(Instant, Pin<Box<Watched<Sleep>>>)>,
}

impl Future for Keeper {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let Some(origin_pool) = this.origin_pool.upgrade() else {
            return Poll::Ready(());
        };
        loop {
            let trim_at = match origin_pool.tend(this.home, cx) {
                Tended::Done => return Poll::Ready(()),
                Tended::Watching { trim_at: None } => {
                    this.trim = None;
                    return Poll::Pending;
                }
                Tended::Watching {
                    trim_at: Some(trim_at),
                } => trim_at,
            };
            let timer = match &mut this.trim {
                Some((armed, timer)) if *armed == trim_at => timer,
                unarmed => {
                    &mut unarmed
                        .insert((trim_at, Box::pin(timers::sleep_until(trim_at))))
                        .1
                }
            };
            if timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.trim = None; // due: the next look closes it
        }
    }
}

#[cfg(test)]
mod idle_tests;
