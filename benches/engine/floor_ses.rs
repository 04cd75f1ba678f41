//! The SES floor (docs/performance.md, "Against the floors"): stratified exhaustive search of
//! TwoPhase under round robin, written for this one specification and this
//! one explorer, as [`floor`](super::floor) is for DFS. A state is the
//! floor's `u64`; the round-robin queue is a `u64` of 4-bit actor ids; a
//! frontier entry is the state, the queue, the current alternative and the
//! count of choices taken (24 bytes). There is no generic explorer, path,
//! invariant or budget.
//!
//! It is written from the algorithm (ARCHITECTURE.md, "Stratified exhaustive search (SES)") and the
//! explorer's definition (`checker/src/explorers/rr.rs`: the first enabled
//! actor of the queue; a delay moves it to the tail; every move to the next
//! choice, an actor's next alternative included, costs one delay), not from the
//! engine's search, so its counts per stratum are an independent oracle
//! for the engine's: the bench checks them before timing either. As in the
//! engine, a frame defers its state before it explores the new successor
//! of its choice, and the successor's explorer is the frame's before the
//! move.
//!
//! *Retiring*, a resumed entry whose remaining choices' successors are all
//! cached is counted at once (its transitions and deferrals owed to the
//! strata that would have resumed it) instead of being resumed once per
//! stratum, as the engine's retirement does; an entry's check computes
//! its successors and prefetches their slots eight entries before its
//! turn. Without retiring, every entry is resumed once per choice: the
//! plain algorithm, the oracle's.

use super::floor::{Floor, MAX_SUCCESSORS, Table, hash};

/// What one stratum did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StratumCounts {
    pub states: u64,
    pub transitions: u64,
    pub deferrals: u64,
}

/// A deferred state.
#[derive(Clone, Copy)]
struct Entry {
    state: u64,
    /// The round-robin queue: actor ids, 4 bits each, the first preferred
    /// in the low bits.
    queue: u64,
    /// The current actor's alternative.
    alt: u32,
    /// The state's choices taken so far.
    next: u32,
}

/// A state's choices: its successors grouped by actor, in id order.
#[derive(Clone, Copy)]
struct Choices {
    succ: [u64; MAX_SUCCESSORS],
    /// Actor `a`'s successors are `succ[start[a]..start[a + 1]]`.
    start: [u8; 17],
    /// Bit `a`: actor `a` is enabled.
    mask: u64,
    total: u32,
}

impl Choices {
    const EMPTY: Choices = Choices {
        succ: [0; MAX_SUCCESSORS],
        start: [0; 17],
        mask: 0,
        total: 0,
    };
}

/// How many entries ahead a retirement check is prepared.
const AHEAD: usize = 8;

/// The SES floor of TwoPhase with `n` resource managers.
pub struct SesFloor {
    floor: Floor,
    actors: u32,
}

impl SesFloor {
    pub fn new(n: u32) -> SesFloor {
        let floor = Floor::new(n);
        SesFloor {
            actors: floor.actors(),
            floor,
        }
    }

    /// Writes the choices of `s` into `c` (in place: a state's choices are
    /// made for every resumed entry).
    #[inline(always)]
    fn choices(&self, s: u64, c: &mut Choices) {
        let mut k = 0;
        c.mask = 0;
        for a in 0..self.actors {
            c.start[a as usize] = k as u8;
            let m = self.floor.actor_successors(s, a, &mut c.succ[k..]);
            c.mask |= u64::from(m > 0) << a;
            k += m;
        }
        c.start[self.actors as usize] = k as u8;
        c.total = k as u32;
    }

    /// The first enabled actor of `queue`: its position and id.
    #[inline(always)]
    fn first_enabled(&self, queue: u64, mask: u64) -> (u32, u32) {
        for pos in 0..self.actors {
            let a = (queue >> (4 * pos)) as u32 & 15;
            if mask >> a & 1 != 0 {
                return (pos, a);
            }
        }
        unreachable!("a state with choices has an enabled actor")
    }

    /// The queue and alternative after the move from the current choice
    /// (actor `a` at position `pos`, alternative `alt`).
    #[inline(always)]
    fn advance(&self, queue: u64, (pos, a): (u32, u32), alt: u32, c: &Choices) -> (u64, u32) {
        let alts = u32::from(c.start[a as usize + 1] - c.start[a as usize]);
        if alt + 1 < alts {
            return (queue, alt + 1);
        }
        // The delay: actor `a` from `pos` to the tail.
        let low = queue & ((1u64 << (4 * pos)) - 1);
        let high = if pos + 1 < 16 { queue >> (4 * (pos + 1)) } else { 0 };
        let last = 4 * (self.actors - 1);
        (low | high << (4 * pos) | u64::from(a) << last, 0)
    }

    /// The successors of the choices an entry has left, from its current
    /// one on: the current actor's alternatives from `alt`, then every
    /// alternative of each enabled actor after it in the queue until the
    /// `left` choices are counted (the actors offered before are at the
    /// queue's tail, in the order they were offered): their fingerprints
    /// written to `out`, their slots prefetched; returns how many.
    #[inline(always)]
    fn left(&self, e: &Entry, c: &Choices, table: &Table, out: &mut [u64; MAX_SUCCESSORS]) -> usize {
        let total = (c.total - e.next) as usize;
        let (mut left, mut k) = (total, 0);
        let (pos, a) = self.first_enabled(e.queue, c.mask);
        let mut from = usize::from(c.start[a as usize]) + e.alt as usize;
        let mut p = pos;
        loop {
            let a = (e.queue >> (4 * p)) as u32 & 15;
            if c.mask >> a & 1 != 0 {
                let end = usize::from(c.start[a as usize + 1]);
                let take = (end - from).min(left);
                for &t in &c.succ[from..from + take] {
                    let fp = hash(t);
                    table.prefetch(fp);
                    out[k] = fp;
                    k += 1;
                }
                left -= take;
                if left == 0 {
                    return total;
                }
            }
            p += 1;
            debug_assert!(p < self.actors, "an entry's choices left are in its queue");
            let next = (e.queue >> (4 * p)) as u32 & 15;
            from = usize::from(c.start[next as usize]);
        }
    }

    /// Searches every reachable state, stratum by stratum; returns each
    /// stratum's counts (criterion times it).
    pub fn search(&self, retiring: bool) -> Vec<StratumCounts> {
        let mut table = Table::new(1 << 16);
        table.insert(hash(0));
        let identity = (0..self.actors).fold(0u64, |q, a| q | u64::from(a) << (4 * a));
        let mut strata = vec![StratumCounts {
            states: 1,
            ..StratumCounts::default()
        }];
        let (mut frontier, mut work) = (Vec::new(), Vec::new());
        self.chain(0, identity, &mut table, &mut frontier, &mut strata[0]);
        // A ring of the next AHEAD entries' prepared checks: entry i's
        // successors are computed and their slots prefetched AHEAD entries
        // before its turn.
        let mut ring = [(Choices::EMPTY, [0u64; MAX_SUCCESSORS], 0usize); AHEAD];
        let mut bound = 0;
        while !frontier.is_empty() {
            bound += 1;
            if strata.len() <= bound {
                strata.push(StratumCounts::default());
            }
            std::mem::swap(&mut work, &mut frontier);
            for i in 0..work.len() + AHEAD {
                if let Some(j) = i.checked_sub(AHEAD) {
                    let (e, (c, fps, r)) = (&work[j], &ring[j % AHEAD]);
                    if retiring && fps[..*r].iter().all(|&fp| table.contains(fp)) {
                        // Taken once in each of the next r strata, deferred
                        // again in all but the last.
                        if strata.len() < bound + r {
                            strata.resize(bound + r, StratumCounts::default());
                        }
                        for (k, n) in strata[bound..bound + r].iter_mut().enumerate() {
                            n.transitions += 1;
                            n.deferrals += u64::from(k + 1 < *r);
                        }
                    } else {
                        self.resume(e, c, &mut table, &mut frontier, &mut strata[bound]);
                    }
                }
                // Entry i takes the slot entry i - AHEAD has just left.
                if let Some(e) = work.get(i) {
                    let (c, fps, r) = &mut ring[i % AHEAD];
                    self.choices(e.state, c);
                    *r = if retiring { self.left(e, c, &table, fps) } else { 0 };
                }
            }
            work.clear();
        }
        strata
    }

    /// Resumes entry `e` (its choices `c`): takes its current choice,
    /// defers it one move on, and explores the successor if it is new.
    #[inline(always)]
    fn resume(&self, e: &Entry, c: &Choices, table: &mut Table, frontier: &mut Vec<Entry>, n: &mut StratumCounts) {
        let cur = self.first_enabled(e.queue, c.mask);
        let t = c.succ[usize::from(c.start[cur.1 as usize]) + e.alt as usize];
        n.transitions += 1;
        if e.next + 1 < c.total {
            n.deferrals += 1;
            let (queue, alt) = self.advance(e.queue, cur, e.alt, c);
            frontier.push(Entry {
                state: e.state,
                queue,
                alt,
                next: e.next + 1,
            });
        }
        if table.insert(hash(t)) {
            n.states += 1;
            self.chain(t, e.queue, table, frontier, n);
        }
    }

    /// Explores the new state `s` reached with the queue `queue` in the
    /// stratum: its first choice (free), then its deferral, then the
    /// successor if it is new, and so on down the chain.
    fn chain(&self, mut s: u64, queue: u64, table: &mut Table, frontier: &mut Vec<Entry>, n: &mut StratumCounts) {
        let mut c = Choices::EMPTY;
        loop {
            self.choices(s, &mut c);
            if c.total == 0 {
                return;
            }
            let cur = self.first_enabled(queue, c.mask);
            let t = c.succ[usize::from(c.start[cur.1 as usize])];
            n.transitions += 1;
            if c.total > 1 {
                n.deferrals += 1;
                let (q, alt) = self.advance(queue, cur, 0, &c);
                frontier.push(Entry {
                    state: s,
                    queue: q,
                    alt,
                    next: 1,
                });
            }
            if !table.insert(hash(t)) {
                return;
            }
            n.states += 1;
            s = t;
        }
    }
}
