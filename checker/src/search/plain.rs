//! The plain stratified search: the algorithm of the paper (§3) as it
//! reads, without the optimisation layer of the `stratified` module. It is
//! the engine's reference: [`Config::plain`] runs it in the optimised
//! search's place for SES, DFS and PB, and the differential tests
//! (`checker/tests/all/plain.rs`, `models/tests/all/plain.rs`) check that
//! both give the same counts in every stratum (ARCHITECTURE.md,
//! "The plain search").
//!
//! ```text
//! DelayBoundedDFS(s, d, i, n):         # i: choices of s taken; n: cost so far
//!   while i < |choices(s)|:
//!     s' = T(current(d), s); c = child(d); i += 1
//!     defer = i < |choices(s)| and n + cost(d) > bound
//!     if defer: frontier.push(s, advance(d), i, n + cost(d), path)
//!     if s' not in cache: cache.add(s'); DelayBoundedDFS(s', c, 0, n)
//!     if defer or i == |choices(s)|: break
//!     n += cost(d); d = advance(d)
//! SES: bound = 0; cache = {s0}; DelayBoundedDFS(s0, d0, 0, 0)
//!      while frontier not empty: bound += 1; resume every entry of the old frontier
//! ```
//!
//! `d` is a [`ChoiceOrder`]: the composed explorer for SES (every move to
//! the next choice is a delay), the natural order for DFS (every move is
//! free: one stratum), the preemption order for PB. The recursion runs on
//! an explicit stack (executions are thousands of steps long): a
//! [`Frame`] holds the locals of one call, [`step`](Plain::step) is one
//! pass of its loop, and the successor's frame goes above it, so that its
//! subtree is explored before the frame's next choice. The loop's last two
//! lines (break, or move to the next choice) are decided before that
//! subtree runs, which changes nothing (the call does not touch its
//! caller's locals); a frame whose loop broke is popped when its
//! successor's subtree is done. A path is derived from the stack when an
//! entry is deferred or a violation found: the index of each frame's
//! choice below it.
//!
//! Besides the pseudo-code, it does what every exhaustive search of the
//! engine does, as the optimised search does it: the cache key (the
//! state's fingerprint, its orbit's with `symmetry`, hashed with the
//! order's state with `exact_bound`), the step limit (a successor at
//! `max_steps` with something enabled is cut, not cached), a full cache
//! (a successor it cannot hold is explored again, not counted, and the
//! next frontier keeps one entry per state), the deadlock check of a
//! terminal state, the run-time soundness check of the order, the
//! watch's calls ([`Watched::count_transition`] before every step,
//! [`Watched::count_state`] for every state counted) and the budgets,
//! checked as often as the optimised search checks them.
//!
//! What it leaves out is the optimisation layer: retired entries, their
//! throttles, passing entries through strata, successors peeked and
//! prefetched, the resume fast path, the path arena, and the parallel
//! driver: it runs on one thread, and `search` refuses it with more.

use super::error::SearchError;
use super::order::{ChoiceOrder, EnabledSet};
use super::progress::Meter;
use super::stratified::{
    cache_budget, check_symmetry, close_report, interrupted_or_late, key_of, offer, offer_at, over_memory,
    progress_line, Ending, RawViolation, SearchResult, Stop, CHECK_EVERY, MEMORY_EVERY,
};
use crate::cache::{FingerprintSet, FixedHashSet, Insert, FIXED_HASHER};
use crate::config::Config;
use crate::explorer::enabled_mask;
use crate::program::{ActorId, Enabled, Event, Program, Violation};
use crate::report::{BoundedBy, Found, Report, Stratum};
use crate::watch::Watched;
use std::collections::VecDeque;
use std::mem::size_of;
use std::time::Instant;

/// The locals of one call `DelayBoundedDFS(s, d, i, n)`.
struct Frame<S, O> {
    /// s.
    state: S,
    /// d, at the current choice.
    order: O,
    /// i: the choices of s taken.
    i: u32,
    /// n: the cost paid so far.
    n: u32,
    /// The steps from s0 to s.
    depth: u32,
    /// choices(s): the enabled actors with their alternatives, their ids
    /// and the ids' mask.
    en: Vec<Enabled>,
    ids: Vec<ActorId>,
    mask: Option<u64>,
    /// |choices(s)|.
    total: u32,
    /// The actors d offered at s so far (the run-time soundness check).
    offered: u64,
    /// The loop broke: the frame goes when its successor's subtree is done.
    done: bool,
}

/// A frontier entry: a state deferred with its order moved to the next
/// choice, resumed in the next stratum.
struct Entry<S, O> {
    state: S,
    order: O,
    i: u32,
    n: u32,
    depth: u32,
    offered: u64,
    /// The path from s0 to the state: (depth, index) for each step whose
    /// choice was not its state's first (the moves to the next choice the
    /// schedule replays).
    path: Vec<(u32, u32)>,
}

/// Runs the plain stratified search from the initial state with `root` as
/// the order there, on one thread. The caller names the strategy in
/// `report`.
pub(super) fn run<P: Program, O: ChoiceOrder>(
    program: Watched<'_, P>,
    root: O,
    config: &Config,
    report: Report,
) -> Result<SearchResult, SearchError> {
    let mut search = Plain {
        program,
        config,
        cache: FingerprintSet::new(cache_budget(config)),
        bound: 0,
        stack: Vec::new(),
        base: Vec::new(),
        frontier: Vec::new(),
        work: VecDeque::new(),
        deferred: FixedHashSet::with_hasher(FIXED_HASHER),
        events: Vec::new(),
        report,
        stratum: Stratum::default(),
        violation: None,
        cut: false,
        revisits: 0,
        started: Instant::now(),
        meter: Meter::new(config.progress.clone()),
        next_check: 0,
        next_memory_check: 0,
        peak_bytes: 0,
    };
    let stop = search.explore(root)?;
    Ok(search.finish(stop))
}

/// The search: one stack, one frontier, one cache.
struct Plain<'a, P: Program, O> {
    program: Watched<'a, P>,
    config: &'a Config,
    cache: FingerprintSet,
    bound: u32,
    stack: Vec<Frame<P::State, O>>,
    /// The path of the bottom frame's state: empty for s0, a resumed
    /// entry's.
    base: Vec<(u32, u32)>,
    /// The next stratum's entries, in the order they were deferred.
    frontier: Vec<Entry<P::State, O>>,
    /// This stratum's entries not resumed yet: the old frontier.
    work: VecDeque<Entry<P::State, O>>,
    /// Once the cache is full: the keys of the states in the next
    /// frontier, which keeps one entry per state.
    deferred: FixedHashSet<u64>,
    events: Vec<Event>,
    report: Report,
    stratum: Stratum,
    violation: Option<RawViolation>,
    /// Some executions were cut at `max_steps`.
    cut: bool,
    /// Successors explored again because the cache was full.
    revisits: u64,
    started: Instant,
    meter: Meter,
    /// The transition counts at which the budgets and the memory are
    /// checked next.
    next_check: u64,
    next_memory_check: u64,
    peak_bytes: u64,
}

impl<P: Program, O: ChoiceOrder> Plain<'_, P, O> {
    /// `SES`: bound 0 from s0, then bound 1, 2, ..., each resuming the
    /// entries the last one deferred, until the frontier is empty, a stop
    /// or `max_delays`.
    fn explore(&mut self, d0: O) -> Result<Option<Stop>, SearchError> {
        let mut started = Instant::now();
        let s0 = self.program.initial();
        if self.config.symmetry {
            check_symmetry(self.program.program(), &s0, self.config)?;
        }
        if self.config.use_cache {
            let key = self.key(&s0, &d0);
            self.cache.insert(key);
        }
        self.count_state(&s0);
        let mut stop = self.arrive(s0, d0, 0, 0, 0, 0)?;
        if stop.is_none() {
            stop = self.dfs()?;
        }
        loop {
            self.close_stratum(started);
            if stop.is_some() || self.frontier.is_empty() {
                return Ok(stop);
            }
            if self.config.max_delays.is_some_and(|m| self.bound >= m) {
                return Ok(Some(Stop::Budget(BoundedBy::MaxDelays)));
            }
            self.bound += 1;
            started = Instant::now();
            self.work = std::mem::take(&mut self.frontier).into();
            self.deferred.clear();
            while let Some(e) = self.work.pop_front() {
                self.base = e.path;
                stop = self.arrive(e.state, e.order, e.i, e.n, e.depth, e.offered)?;
                if stop.is_none() {
                    stop = self.dfs()?;
                }
                if stop.is_some() {
                    break;
                }
            }
        }
    }

    /// The call `DelayBoundedDFS(s, d, i, n)` for `s` at `depth`, with the
    /// actors `offered` there so far: pushes its frame, or at a terminal
    /// state checks for a deadlock.
    fn arrive(
        &mut self,
        s: P::State,
        d: O,
        i: u32,
        n: u32,
        depth: u32,
        offered: u64,
    ) -> Result<Option<Stop>, SearchError> {
        let mut en = Vec::new();
        self.program.enabled(&s, &mut en);
        if en.is_empty() {
            let deadlock = self.config.deadlock.then(|| self.program.deadlock(&s)).flatten();
            return Ok(deadlock.map(|v| {
                let path = self.path(self.stack.len());
                self.violate(v, depth, path)
            }));
        }
        let ids: Vec<ActorId> = en.iter().map(|e| e.actor).collect();
        let total = en.iter().map(|e| e.alternatives.max(1)).sum();
        let mask = enabled_mask(&ids);
        let set = EnabledSet {
            en: &en,
            ids: &ids,
            mask,
        };
        // The soundness check of the choice d is at: a new state's first,
        // or the one a resumed entry moved to.
        let cur = d.current(&set);
        let offered = if i == 0 {
            offer(0, cur.0, &set, &d)?
        } else {
            offer_at(offered, cur, &set, &d)?
        };
        self.stack.push(Frame {
            state: s,
            order: d,
            i,
            n,
            depth,
            en,
            ids,
            mask,
            total,
            offered,
            done: false,
        });
        Ok(None)
    }

    /// Runs the frames on the stack until it is empty or the search
    /// stops. The budgets are checked when due before a step and after it,
    /// as the optimised search checks them.
    fn dfs(&mut self) -> Result<Option<Stop>, SearchError> {
        while let Some(top) = self.stack.last() {
            if top.done {
                self.stack.pop();
                continue;
            }
            if let Some(stop) = self.budgets_due() {
                return Ok(Some(stop));
            }
            if let Some(stop) = self.step()? {
                return Ok(Some(stop));
            }
        }
        Ok(None)
    }

    /// One pass of the loop of the top frame's call.
    fn step(&mut self) -> Result<Option<Stop>, SearchError> {
        let k = self.stack.len() - 1;
        let (program, bound) = (self.program, self.bound);
        let f = &mut self.stack[k];
        let set = EnabledSet {
            en: &f.en,
            ids: &f.ids,
            mask: f.mask,
        };
        // s' = T(current(d), s); c = child(d); i += 1
        let cur = f.order.current(&set);
        let (actor, alt) = cur;
        program.count_transition(&f.state, actor, alt);
        let mut next = f.state.clone();
        self.events.clear();
        let executed = program.execute(&mut next, actor, alt, &mut self.events);
        self.report.transitions += 1;
        self.stratum.transitions += 1;
        f.i += 1;
        if let Err(v) = executed {
            let depth = f.depth;
            let path = self.path(k + 1);
            return Ok(Some(self.violate(v, depth, path)));
        }
        let c = f.order.child(actor, &self.events);
        // defer = i < |choices(s)| and n + cost(d) > bound
        let last = f.i == f.total;
        let cost = if last { 0 } else { f.order.advance_cost(&set) };
        let defer = !last && f.n + cost > bound;
        let (n, depth) = (f.n, f.depth);
        // if defer: frontier.push(s, advance(d), i, n + cost(d), path)
        let deferred = defer.then(|| {
            let mut d = f.order.clone();
            d.advance_from(cur, &set);
            Entry {
                state: f.state.clone(),
                order: d,
                i: f.i,
                n: n + cost,
                depth,
                offered: f.offered,
                path: Vec::new(),
            }
        });
        if defer || last {
            // break: once the subtree of s' is done.
            f.done = true;
        } else {
            // n += cost(d); d = advance(d)
            f.n += cost;
            f.order.advance_from(cur, &set);
            f.offered = offer_at(f.offered, f.order.current(&set), &set, &f.order)?;
        }
        if let Some(e) = deferred {
            self.defer(k, e);
        }
        // if s' not in cache: cache.add(s'); DelayBoundedDFS(s', c, 0, n)
        match self.visit(next, c, n, depth + 1)? {
            Some(stop) => Ok(Some(stop)),
            None => Ok(self.budgets_due()),
        }
    }

    /// `frontier.push(...)`: the entry `e` of frame `k`'s state.
    fn defer(&mut self, k: usize, mut e: Entry<P::State, O>) {
        self.report.deferrals += 1;
        self.stratum.deferrals += 1;
        if self.report.cache_full && !self.deferred.insert(self.key(&e.state, &e.order)) {
            // The cache is full and an entry of this state waits in the
            // next frontier already (ARCHITECTURE.md, "Passing through").
            return;
        }
        e.path = self.path(k);
        self.frontier.push(e);
    }

    /// `if s' not in cache: cache.add(s'); DelayBoundedDFS(s', c, 0, n)`
    /// for the successor `s` at `depth`, with the order `d` there. A
    /// successor at the step limit with something enabled is cut instead:
    /// not cached, so that a shorter path may explore it. Without a cache
    /// every successor is new; one a full cache cannot hold is explored
    /// again, not counted.
    fn visit(&mut self, s: P::State, d: O, n: u32, depth: u32) -> Result<Option<Stop>, SearchError> {
        if depth as usize >= self.config.max_steps {
            let mut en = Vec::new();
            self.program.enabled(&s, &mut en);
            if !en.is_empty() {
                self.cut = true;
                return Ok(None);
            }
        }
        let found = if self.config.use_cache {
            let key = self.key(&s, &d);
            self.cache.insert(key)
        } else {
            Insert::New
        };
        match found {
            Insert::Present => return Ok(None),
            Insert::New => self.count_state(&s),
            Insert::Full => {
                self.report.cache_full = true;
                self.revisits += 1;
            }
        }
        self.arrive(s, d, 0, n, depth, 0)
    }

    /// The cache key of `s` with order `d`: its fingerprint (its orbit's
    /// with `symmetry`), hashed with d's state with `exact_bound`.
    fn key(&self, s: &P::State, d: &O) -> u64 {
        let fp = self.program.fingerprint(s, self.config.symmetry);
        if self.config.exact_bound {
            key_of(fp, d)
        } else {
            fp
        }
    }

    /// Counts the new state `s`.
    fn count_state(&mut self, s: &P::State) {
        self.program.count_state(s);
        self.report.states += 1;
        self.stratum.new_states += 1;
    }

    /// The path from s0 to the state of frame `k` (`k` = the stack's
    /// length: the successor the top frame's last choice reached).
    fn path(&self, k: usize) -> Vec<(u32, u32)> {
        let mut path = self.base.clone();
        let below = self.stack[..k].iter().filter(|f| f.i > 1);
        path.extend(below.map(|f| (f.depth, f.i - 1)));
        path
    }

    /// Records the violation `v` at `step`, reached by `path`.
    fn violate(&mut self, v: Violation, step: u32, path: Vec<(u32, u32)>) -> Stop {
        let found = Found {
            violation: v,
            step: step as usize,
        };
        self.violation = Some(RawViolation { found, advances: path });
        Stop::Violation
    }

    /// Records the stratum that started at `started`.
    fn close_stratum(&mut self, started: Instant) {
        let mut s = std::mem::take(&mut self.stratum);
        s.bound = self.bound;
        s.frontier = self.frontier.len() as u64;
        s.elapsed_s = started.elapsed().as_secs_f64();
        self.report.strata.push(s);
        self.report.bound_reached = self.bound;
    }

    /// The budgets when due: the stop flag, the time and the states every
    /// [`CHECK_EVERY`] transitions, the memory every [`MEMORY_EVERY`].
    fn budgets_due(&mut self) -> Option<Stop> {
        let transitions = self.report.transitions;
        if transitions < self.next_check {
            return None;
        }
        self.next_check = transitions + CHECK_EVERY;
        if let Some(stop) = interrupted_or_late(self.config, self.started) {
            return Some(stop);
        }
        if self.config.max_states.is_some_and(|m| self.report.states >= m) {
            return Some(Stop::Budget(BoundedBy::States));
        }
        if transitions < self.next_memory_check {
            return None;
        }
        self.next_memory_check = transitions + MEMORY_EVERY;
        let bytes = self.bytes();
        self.peak_bytes = self.peak_bytes.max(bytes);
        let entries = (self.frontier.len() + self.work.len()) as u64;
        if let Some(rss) = over_memory(self.config, bytes) {
            let (budget, cache) = (self.config.max_memory >> 20, self.cache.bytes() >> 20);
            self.report.notes.push(format!(
                "stopped at the memory budget of {budget} MiB: resident {} MiB, cache {cache} MiB, frontier {entries} entries",
                rss >> 20
            ));
            return Some(Stop::Budget(BoundedBy::Memory));
        }
        let (strategy, bound, states) = (&self.report.strategy, self.bound, self.report.states);
        let counts = (states, transitions, entries);
        self.meter.tick(|secs| progress_line(strategy, bound, counts, secs));
        None
    }

    /// The bytes the search holds: the cache, the entries, the stack.
    fn bytes(&self) -> u64 {
        let entries = (self.frontier.capacity() + self.work.capacity()) * size_of::<Entry<P::State, O>>();
        let frames = self.stack.capacity() * size_of::<Frame<P::State, O>>();
        (self.cache.bytes() + entries + frames) as u64
    }

    /// The report, with the outcome `stop` says.
    fn finish(mut self, stop: Option<Stop>) -> SearchResult {
        self.meter.finish();
        self.report.notes.push(
            "the plain stratified search ran (Config::plain, --plain): no retirement, throttles, pass-through, look-ahead or fast resume".into(),
        );
        let end = Ending {
            stop,
            cut: self.cut,
            revisits: self.revisits,
            peak_bytes: self.peak_bytes.max(self.bytes()),
            started: self.started,
        };
        close_report(self.report, self.violation, self.config, &self.cache, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Outcome;
    use crate::search::order::Natural;
    use crate::testing::RandomProgram;

    /// Two actors, A (0) and B (1), that each take one step: states 0
    /// (neither ran), 1 (A ran), 2 (B ran), 3 (both).
    fn diamond() -> RandomProgram {
        RandomProgram {
            states: 4,
            actors: 2,
            succ: vec![
                vec![vec![1], vec![2]],
                vec![vec![], vec![3]],
                vec![vec![3], vec![]],
                vec![vec![], vec![]],
            ],
            bad: FixedHashSet::with_hasher(FIXED_HASHER),
            seen: None,
        }
    }

    /// (bound, new states, transitions, deferrals, frontier) per stratum.
    fn strata(r: &Report) -> Vec<(u32, u64, u64, u64, u64)> {
        let s = r.strata.iter();
        s.map(|s| (s.bound, s.new_states, s.transitions, s.deferrals, s.frontier))
            .collect()
    }

    /// Worked by hand. Every move costing one: bound 0 takes A at 0
    /// (deferring 0 at B), then B at 1, reaching 3 (terminal): 3 states,
    /// 2 transitions, 1 deferral. Bound 1 resumes 0 at B, reaching 2,
    /// whose A reaches 3 again: 1 state, 2 transitions. Every move free
    /// (DFS): the same 4 states and 4 transitions in one stratum.
    #[test]
    fn the_diamond_strata_are_the_ones_worked_by_hand() {
        let config = Config::default();
        let search = |order| {
            run(
                Watched::bare(&diamond()),
                order,
                &config,
                Report::new("test", None, 0, 1),
            )
            .unwrap()
        };
        let charged = search(Natural::charging());
        assert_eq!(strata(&charged.report), vec![(0, 3, 2, 1, 1), (1, 1, 2, 0, 0)]);
        let free = search(Natural::default());
        assert_eq!(strata(&free.report), vec![(0, 4, 4, 0, 0)]);
        for r in [&charged.report, &free.report] {
            assert_eq!((r.states, r.transitions, r.outcome), (4, 4, Outcome::Verified));
        }
    }

    /// A violation's path names the choices that were not their state's
    /// first: B at 1 is choice 0 there, A at 2 needs the move past A at 0.
    #[test]
    fn a_violation_path_lists_the_moves_to_the_next_choice() {
        let config = Config::default();
        for (bad, step, path) in [((1, 1, 0), 1, vec![]), ((2, 0, 0), 1, vec![(0, 1)])] {
            let mut program = diamond();
            program.bad.insert(bad);
            let r = run(
                Watched::bare(&program),
                Natural::charging(),
                &config,
                Report::new("test", None, 0, 1),
            )
            .unwrap();
            let v = r.violation.expect("a violation");
            assert_eq!((v.found.step, v.advances), (step, path), "{bad:?}");
        }
    }
}
