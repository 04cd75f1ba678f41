//! SURW, the selectively uniform random walk (Zhao, Wolff, Mathur,
//! Roychoudhury, *Selectively Uniform Concurrency Testing*, ASPLOS 2025).
//!
//! # The algorithm
//!
//! A random walk that picks an enabled thread uniformly at every step is
//! far from uniform over interleavings: a thread with few events left is
//! picked as often as one with many, so the interleavings in which a short
//! thread runs late are rare (two threads with 1 and n events: the short
//! one runs last with probability 2^-n, against 1/(n + 1) of the
//! interleavings). *URW* picks each enabled thread with probability
//! proportional to its number of remaining events, counted in advance by a
//! profiling run; a thread created later takes its share out of its
//! creator's count (the creator's count includes the events of the threads
//! it will create, and the scheduler's intention moves to the child with
//! probability child / creator when the creator was the one meant to run).
//!
//! *SURW* applies URW only to a set of *interesting* events (in the paper,
//! accesses to shared objects that several threads touch, found by the
//! profiling run): each thread's count is its number of interesting
//! events. Every step, another scheduler (`pickFrom`; the paper's
//! configuration: a random priority per pending event) picks a thread; a
//! pick whose next event is not interesting runs at once; a pick whose next
//! event is interesting runs only if it is the thread URW intends (drawn,
//! when none is, with probability proportional to the remaining counts of
//! the enabled threads that are not blocked); otherwise it is blocked until
//! the intended thread's interesting event has run. When every enabled
//! thread is blocked (the intended one cannot run), all are unblocked and
//! the intention is redrawn. A thread that reaches an interesting event
//! with a count of 0 is counted as having 1.
//!
//! # The published guarantee
//!
//! For programs without blocking synchronization and with exact counts,
//! URW samples every interleaving with the same probability (the weight
//! of a thread at each step is its share of the multinomial number of
//! ways to finish the execution), and SURW samples every ordering of the
//! interesting events with the same probability while every interleaving
//! of all events keeps a positive probability (the paper's Γ-completeness:
//! no schedule is excluded). Blocking (a thread not enabled while it has
//! events left) and wrong counts make the distribution non-uniform, not
//! incomplete. What mcheck checks: on a small plain program where every
//! thread runs without blocking, the hit rate equals the uniform
//! probability, computed in the test by an independent enumeration
//! (`checker/tests/all/surw.rs`).
//!
//! # mcheck's adaptation (what it assumes)
//!
//! mcheck's scheduler sees only the enabled actors, their alternatives and
//! each step's events (`Sent`, `Created`, `Halted`; see [`Event`]). So:
//!
//! * An *event* is one step of an actor: a machine's step delivers one
//!   message, its oldest pending one (the message bookkeeping of
//!   [`super::pos::Inboxes`], with the assumptions stated there: exact for
//!   FIFO machines that do not defer).
//! * Messages race when two senders send to the same receiver: the order of
//!   the sending steps decides the order of the receiver's inbox. So the
//!   *interesting* events are the steps that send to a *racy receiver*, one
//!   that received messages from at least two senders in the profiling
//!   run. A step is known before it runs only by its *signature*: its actor
//!   and the sender of the message it delivers (or "untracked": a setup
//!   message or a plain program's step; or "continuing" a handler
//!   suspended at a choice). A signature is interesting when some step
//!   with it sent to a racy receiver in the profiling run.
//! * A plain [`Program`] reports no `Sent` events: when the profiling run
//!   saw none, every step is interesting and SURW is URW over actors.
//! * The *profiling run* is one random walk (uniform among all choices, as
//!   `-s rs`) seeded from the run's seed only (stream 0 of sample 0 of a
//!   round no walk uses), run before the walks: the same profile on any
//!   number of threads and shards. It is not counted in the report's
//!   schedules and steps (as PCT's measuring run); a note says its length.
//!   An actor's estimate is its number of interesting steps in the profile
//!   plus the estimates of the actors it created there (in reverse order of
//!   creation, so grandchildren count).
//! * Actor ids name the same actor across executions (the order of
//!   creation). An actor created in a walk takes the profile's estimate of
//!   its id, or, if the profile never saw it, the smallest positive
//!   estimate (1 if none); its creator's count drops by as much (not below
//!   0). An actor running past its estimate counts as 1 at each further
//!   interesting step, as in the paper.
//! * `pickFrom` is a random priority per pending step (the paper's
//!   configuration): drawn when the step is first considered, redrawn after
//!   the actor's step. Alternatives (data choices, the network's delivery
//!   alternatives) are drawn uniformly, as in PCT and POS.
//!
//! Every random choice comes from a seeded `rand_xoshiro` generator, and
//! walk `i` is a pure function of (seed, i): the report is the same on any
//! `-j`. The counterexample is a choice path.

use super::batch::stream_seed;
use super::error::SearchError;
use super::exec::{Driver, choice_at};
use super::pos::Inboxes;
use super::walk::{run_one, walk_until_found};
use crate::config::Config;
use crate::program::{ActorId, Enabled, Event, Program};
use crate::report::Report;
use crate::watch::Watched;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeSet;

/// The round whose sample 0 seeds the profiling run (no walk uses it).
const PROFILE_ROUND: u64 = u64::MAX;
/// The signature code of an untracked step.
const UNTRACKED: u32 = u32::MAX;
/// The signature code of the rest of a handler suspended at a choice.
const CONTINUING: u32 = u32::MAX - 1;

/// What the scheduler knows of a step before it runs: (actor, the sender of
/// the message it delivers, or [`UNTRACKED`] or [`CONTINUING`]).
type Signature = (u32, u32);

/// The signature of `actor`'s next step at a state with `en` enabled.
fn signature(inboxes: &Inboxes, actor: ActorId, en: &[Enabled]) -> Signature {
    let code = if inboxes.continuing(en) {
        CONTINUING
    } else {
        inboxes.head(actor).map_or(UNTRACKED, |m| m.from.0)
    };
    (actor.0, code)
}

/// Grow `v` so that `actor` is an index; its slot.
fn slot<T: Default + Clone>(v: &mut Vec<T>, actor: ActorId) -> &mut T {
    let i = actor.0 as usize;
    if v.len() <= i {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}

/// What the profiling run measured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Profile {
    /// No message was seen sent: every step is interesting.
    all: bool,
    /// The interesting signatures.
    interesting: BTreeSet<Signature>,
    /// Each actor's estimate (by id): its interesting steps and those of
    /// the actors it created; `None` for an actor the profile never saw.
    estimate: Vec<Option<u64>>,
    /// The estimate of an actor the profile never saw.
    unseen: u64,
    /// The profile's length in steps.
    steps: u64,
}

impl Profile {
    /// The estimated interesting events of `actor`.
    fn estimate(&self, actor: ActorId) -> u64 {
        self.estimate
            .get(actor.0 as usize)
            .copied()
            .flatten()
            .unwrap_or(self.unseen)
    }

    fn is_interesting(&self, sig: Signature) -> bool {
        self.all || self.interesting.contains(&sig)
    }

    /// The profile of one recorded execution.
    fn build(rec: Profiler) -> Profile {
        let racy = |to: &ActorId| rec.senders.get(to.0 as usize).is_some_and(|s| s.len() >= 2);
        let all = rec.senders.iter().all(BTreeSet::is_empty);
        let interesting: BTreeSet<Signature> = rec
            .steps
            .iter()
            .filter(|(_, to)| to.iter().any(racy))
            .map(|(sig, _)| *sig)
            .collect();
        let mut estimate: Vec<Option<u64>> = Vec::new();
        for (sig, _) in &rec.steps {
            let own = u64::from(all || interesting.contains(sig));
            *slot(&mut estimate, ActorId(sig.0)).get_or_insert(0) += own;
        }
        for (_, child) in &rec.created {
            slot(&mut estimate, *child).get_or_insert(0);
        }
        for (parent, child) in rec.created.iter().rev() {
            let c = estimate[child.0 as usize].unwrap_or(0);
            *slot(&mut estimate, *parent).get_or_insert(0) += c;
        }
        let unseen = estimate.iter().flatten().copied().filter(|&e| e > 0).min().unwrap_or(1);
        Profile {
            all,
            interesting,
            estimate,
            unseen,
            steps: rec.steps.len() as u64,
        }
    }

    /// A one-line summary for the report.
    pub(super) fn note(&self) -> String {
        let events: u64 = self.estimate.iter().flatten().sum();
        let actors = self.estimate.iter().flatten().filter(|&&e| e > 0).count();
        let which = if self.all {
            "every step (no messages seen)".to_string()
        } else {
            format!("{} step signatures", self.interesting.len())
        };
        format!(
            "surw profile: one random walk of {} steps; interesting: {which}; \
             {actors} actors with interesting events (estimates and creators' shares sum to {events})",
            self.steps
        )
    }
}

/// The profiling run's driver: uniform among all choices, recording each
/// step's signature and receivers, who sent to whom, and who created whom.
#[derive(Debug)]
struct Profiler {
    rng: Xoshiro256PlusPlus,
    inboxes: Inboxes,
    /// Each step: its signature and the receivers of its messages.
    steps: Vec<(Signature, Vec<ActorId>)>,
    /// Per receiver (by id): the distinct senders seen.
    senders: Vec<BTreeSet<u32>>,
    /// (creator, created), in order.
    created: Vec<(ActorId, ActorId)>,
}

impl Driver for Profiler {
    fn choose(&mut self, _step: usize, en: &[Enabled], _ids: &[ActorId]) -> Result<Option<(ActorId, u32)>, String> {
        let total: u64 = en.iter().map(|e| u64::from(e.alternatives)).sum();
        let c = choice_at(en, self.rng.random_range(0..total));
        if let Some((actor, _)) = c {
            self.steps.push((signature(&self.inboxes, actor, en), Vec::new()));
            self.inboxes.take(actor, en);
        }
        Ok(c)
    }

    fn observe(&mut self, actor: ActorId, events: &[Event]) {
        for e in events {
            match e {
                Event::Sent { from, to } => {
                    slot(&mut self.senders, *to).insert(from.0);
                    if let Some((_, to_list)) = self.steps.last_mut() {
                        to_list.push(*to);
                    }
                }
                Event::Created(info) => self.created.push((actor, info.id)),
                Event::Halted(_) | Event::Custom { .. } => {}
            }
        }
        self.inboxes.observe(actor, events, |_| 0);
    }
}

/// The profile of `program`: one random walk seeded from `seed`.
pub(super) fn profile<P: Program>(program: Watched<'_, P>, config: &Config) -> Profile {
    let mut rec = Profiler {
        rng: Xoshiro256PlusPlus::seed_from_u64(stream_seed(config.seed, PROFILE_ROUND, 0, 0)),
        inboxes: Inboxes::default(),
        steps: Vec::new(),
        senders: Vec::new(),
        created: Vec::new(),
    };
    run_one(program, &mut rec, config.max_steps, false);
    Profile::build(rec)
}

/// The SURW scheduler of one execution.
#[derive(Debug)]
pub(super) struct SurwDriver<'p> {
    profile: &'p Profile,
    rng: Xoshiro256PlusPlus,
    inboxes: Inboxes,
    /// Remaining interesting events per actor (by id), set on first sight.
    weight: Vec<Option<u64>>,
    /// The priority of each actor's pending step (by id), drawn when needed.
    prio: Vec<Option<u64>>,
    /// Actors blocked until the intended actor's interesting step (by id).
    blocked: Vec<bool>,
    /// The actor whose interesting step URW chose to run next.
    intended: Option<ActorId>,
}

impl<'p> SurwDriver<'p> {
    pub(super) fn new(profile: &'p Profile, seed: u64) -> Self {
        SurwDriver {
            profile,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            inboxes: Inboxes::default(),
            weight: Vec::new(),
            prio: Vec::new(),
            blocked: Vec::new(),
            intended: None,
        }
    }

    fn weight(&mut self, actor: ActorId) -> &mut u64 {
        let e = self.profile.estimate(actor);
        slot(&mut self.weight, actor).get_or_insert(e)
    }

    fn priority(&mut self, actor: ActorId) -> u64 {
        let rng = &mut self.rng;
        *slot(&mut self.prio, actor).get_or_insert_with(|| rng.random())
    }

    fn is_blocked(&self, actor: ActorId) -> bool {
        self.blocked.get(actor.0 as usize).copied().unwrap_or(false)
    }

    /// `pickFrom`: the unblocked enabled actor with the highest priority
    /// (ties, which 64-bit draws make rare, to the lowest id).
    fn pick(&mut self, en: &[Enabled]) -> Option<ActorId> {
        let mut best: Option<(ActorId, u64)> = None;
        for e in en {
            if self.is_blocked(e.actor) {
                continue;
            }
            let p = self.priority(e.actor);
            if best.is_none_or(|(_, b)| p > b) {
                best = Some((e.actor, p));
            }
        }
        best.map(|(a, _)| a)
    }

    /// URW's draw: an unblocked enabled actor with probability proportional
    /// to its remaining interesting events (some has at least 1).
    fn draw_intended(&mut self, en: &[Enabled]) -> ActorId {
        let mut weights = Vec::with_capacity(en.len());
        for e in en {
            let w = if self.is_blocked(e.actor) {
                0
            } else {
                *self.weight(e.actor)
            };
            weights.push(w);
        }
        let mut r = self.rng.random_range(0..weights.iter().sum::<u64>());
        for (e, w) in en.iter().zip(weights) {
            if r < w {
                return e.actor;
            }
            r -= w;
        }
        unreachable!("r is below the sum of the weights")
    }

    fn unblock_all(&mut self) {
        self.blocked.iter_mut().for_each(|b| *b = false);
        self.intended = None;
    }

    /// The actor to run at a state with `en` enabled.
    fn next_actor(&mut self, en: &[Enabled]) -> ActorId {
        loop {
            let Some(a) = self.pick(en) else {
                // The intended actor cannot run: redraw.
                self.unblock_all();
                continue;
            };
            if !self.profile.is_interesting(signature(&self.inboxes, a, en)) {
                return a;
            }
            let w = self.weight(a);
            *w = (*w).max(1);
            let intended = match self.intended {
                Some(x) => x,
                None => {
                    let x = self.draw_intended(en);
                    self.intended = Some(x);
                    x
                }
            };
            if a == intended {
                *self.weight(a) -= 1;
                self.unblock_all();
                return a;
            }
            *slot(&mut self.blocked, a) = true;
        }
    }
}

impl Driver for SurwDriver<'_> {
    fn choose(&mut self, _step: usize, en: &[Enabled], _ids: &[ActorId]) -> Result<Option<(ActorId, u32)>, String> {
        let actor = self.next_actor(en);
        let alternatives = en.iter().find(|e| e.actor == actor).map_or(1, |e| e.alternatives);
        self.inboxes.take(actor, en);
        Ok(Some((actor, self.rng.random_range(0..alternatives))))
    }

    fn observe(&mut self, actor: ActorId, events: &[Event]) {
        // Its next step is a new event, with a new priority.
        *slot(&mut self.prio, actor) = None;
        for e in events {
            if let Event::Created(info) = e {
                let child = self.profile.estimate(info.id);
                let parent = *self.weight(actor);
                if self.intended == Some(actor) && parent > 0 && self.rng.random_range(0..parent) < child {
                    self.intended = Some(info.id);
                }
                *self.weight(actor) = parent.saturating_sub(child);
                *slot(&mut self.weight, info.id) = Some(child);
            }
        }
        self.inboxes.observe(actor, events, |_| 0);
    }
}

/// SURW (see the module docs): a profiling run, then walks until a
/// violation or a budget, one execution per sample on the batch runner,
/// each seeded from the run's seed and the sample's index. The
/// counterexample is a choice path.
pub fn surw<P: Program>(program: &P, config: &Config) -> Result<Report, SearchError> {
    surw_on(Watched::bare(program), config)
}

/// [`surw`] on a watched program.
pub(crate) fn surw_on<P: Program>(program: Watched<'_, P>, config: &Config) -> Result<Report, SearchError> {
    let profile = profile(program, config);
    let mut report = Report::new("surw", None, config.seed, 1);
    report.notes.push(profile.note());
    let profile = &profile;
    walk_until_found(program, config, report, "surw", move |seed| {
        SurwDriver::new(profile, seed)
    })
}

#[cfg(test)]
mod tests {
    use super::super::pos::Delivery;
    use super::*;
    use crate::program::ActorInfo;

    fn sent(from: u32, to: u32) -> Event {
        Event::Sent {
            from: ActorId(from),
            to: ActorId(to),
        }
    }

    fn en(actors: &[u32]) -> Vec<Enabled> {
        actors
            .iter()
            .map(|&a| Enabled {
                actor: ActorId(a),
                alternatives: 1,
            })
            .collect()
    }

    /// A recorded run: 0 sends to 1 and 2 and creates 4; 1 and 2 each send
    /// to 3 (racy: two senders); 2 also sends to 1 (racy: senders 0 and
    /// 2); 3 and 4 send nothing.
    fn recorded() -> Profiler {
        let mut rec = Profiler {
            rng: Xoshiro256PlusPlus::seed_from_u64(0),
            inboxes: Inboxes::default(),
            steps: Vec::new(),
            senders: Vec::new(),
            created: Vec::new(),
        };
        let info = ActorInfo {
            id: ActorId(4),
            kind: "x",
            name: "x".into(),
        };
        let script: [(u32, Vec<Event>); 5] = [
            (0, vec![sent(0, 1), sent(0, 2), Event::Created(info)]),
            (1, vec![sent(1, 3)]),
            (2, vec![sent(2, 3), sent(2, 1)]),
            (3, vec![]),
            (4, vec![]),
        ];
        for (a, events) in script {
            let sig = signature(&rec.inboxes, ActorId(a), &en(&[a]));
            rec.steps.push((sig, Vec::new()));
            let d = rec.inboxes.take(ActorId(a), &en(&[a]));
            assert_eq!(matches!(d, Delivery::Message(_)), a != 0 && a != 4, "{a}");
            rec.observe(ActorId(a), &events);
        }
        rec
    }

    /// The interesting signatures are the steps that sent to a receiver
    /// with two senders; an actor's estimate adds its children's.
    #[test]
    fn profile_marks_racing_sends_and_adds_children() {
        let p = Profile::build(recorded());
        assert!(!p.all);
        // 0's untracked step sent to 1 (racy: 0 and 2); 1's and 2's steps
        // (delivering 0's messages) sent to 3 (racy: 1 and 2).
        let want: BTreeSet<Signature> = [(0, UNTRACKED), (1, 0), (2, 0)].into_iter().collect();
        assert_eq!(p.interesting, want);
        assert_eq!(p.estimate, vec![Some(1), Some(1), Some(1), Some(0), Some(0)]);
        assert_eq!((p.unseen, p.steps), (1, 5));
        assert_eq!(p.estimate(ActorId(9)), 1);
    }

    /// Without messages every step is interesting and counts.
    #[test]
    fn plain_profile_counts_every_step() {
        let mut rec = recorded();
        rec.senders.clear();
        let p = Profile::build(rec);
        assert!(p.all && p.is_interesting((3, UNTRACKED)));
        // 0 counts its own step and its child 4's.
        assert_eq!(p.estimate, vec![Some(2), Some(1), Some(1), Some(1), Some(1)]);
    }

    /// With every step interesting, the first actor to run is drawn in
    /// proportion to the estimates (1 and 3), whatever the priorities
    /// pick first; the one that ran counts down, and nothing stays blocked.
    #[test]
    fn urw_draws_in_proportion_to_the_estimates() {
        let profile = Profile {
            all: true,
            estimate: vec![Some(1), Some(3)],
            unseen: 1,
            ..Profile::default()
        };
        let e = en(&[0, 1]);
        let n = 4000u64;
        let mut second = 0;
        for seed in 0..n {
            let mut d = SurwDriver::new(&profile, seed);
            let a = d.next_actor(&e);
            assert_eq!(*d.weight(a), [0, 2][a.0 as usize]);
            assert!(d.intended.is_none() && !d.blocked.iter().any(|&b| b));
            second += u64::from(a == ActorId(1));
        }
        // 3/4 of 4000 = 3000, sd 27.4; z < 3.29 (seeds pinned).
        assert!((second as f64 - 3000.0).abs() < 3.29 * 27.4, "{second}");
    }
}
