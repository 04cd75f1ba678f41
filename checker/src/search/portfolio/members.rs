//! The sampling members of the portfolio: stratified sampling with each
//! built-in explorer, and the random baselines, each of these twice: as
//! the technique runs alone, and with its walks cut short (`rs-cut`,
//! `pct-cut`, ...). A member's `k`-th sample is exactly the `k`-th sample
//! the technique run alone with the same seed takes (the same seeds, the
//! same execution), so the schedule of a violation it finds is an
//! ordinary schedule of that technique. A cut member's `k`-th walk is the
//! technique's walk with the seed of round 1 (not 0), index `k`, cut at
//! the member's depth ([`Member::depth`]): a violation it finds is the one
//! that walk finds uncut, at the same step, so its schedule is an
//! ordinary schedule of the technique too.

use super::super::DEFAULT_PCT_DEPTH;
use super::super::batch::{Sample, stream_seed};
use super::super::error::SearchError;
use super::super::pct::{PctDriver, depth_report};
use super::super::pctcp::PctcpDriver;
use super::super::pos::PosDriver;
use super::super::random::UniformDriver;
use super::super::sample::{Limits, Scratch, run_sample};
use super::super::ss::{SsParams, batch_sample, prepare};
use super::super::surw::{Profile, SurwDriver, profile};
use super::super::walk::run_one;
use crate::config::Config;
use crate::explorer::Explorer;
use crate::explorers::{AnyExplorer, builtin};
use crate::program::{ActorId, ActorInfo, Program};
use crate::schedule::PathKind;
use crate::watch::Watched;

/// What a member runs.
#[derive(Clone, Debug)]
enum Technique {
    /// Stratified sampling with this explorer (the default settings).
    Ss(AnyExplorer),
    Rs,
    /// PCT with the initial actors, the depth and the range of its change
    /// points.
    Pct(Vec<ActorId>, u32, u64),
    Pos,
    /// PCTCP with its depth and range.
    Pctcp(u32, u64),
    Surw(Profile),
}

/// One sampling member and what it has done so far.
#[derive(Debug)]
pub(super) struct Member {
    /// The name in the report: `ss-rtc`, `rs`, `pct`, ...
    pub(super) name: String,
    technique: Technique,
    /// Its weight among the sampling members (see the portfolio's
    /// module docs).
    pub(super) weight: u64,
    /// Its walks are cut at [`Member::depth`] (round 1's seeds).
    cut: bool,
    /// Samples taken.
    pub(super) taken: u64,
    /// Steps of those samples and of its probes (not SURW's one profiling
    /// run).
    pub(super) steps: u64,
    /// The steps of the probes of its first sample that were cut short
    /// (see [`Member::probe_cap`]).
    pub(super) probed: u64,
    /// How many of them.
    pub(super) probes: u32,
    /// Stratified sampling's next sample: (delay bound, index).
    next: (u32, u64),
    /// It has nothing left to sample (SS past `max_delays`).
    pub(super) exhausted: bool,
}

/// Where one sample of a member comes from: its round and index, as the
/// technique alone numbers them.
pub(super) type Coord = (u32, u64);

/// The shared, read-only inputs of every sample.
pub(super) struct Inputs<'a, P: Program> {
    pub(super) program: Watched<'a, P>,
    pub(super) s0: P::State,
    pub(super) actors0: Vec<ActorInfo>,
    pub(super) config: &'a Config,
    pub(super) limits: Limits<'a>,
    pub(super) ss: SsParams,
}

/// The sampling members, in the report's order: SS with each built-in
/// explorer (weight 2), then RS, PCT, POS, PCTCP and SURW with their
/// default settings (weight 1), then the same five with their walks cut
/// (weight 1).
pub(super) fn members<P: Program>(program: Watched<'_, P>, config: &Config) -> Result<Vec<Member>, SearchError> {
    let mut techniques = Vec::new();
    for name in ["rr", "rtc", "prr"] {
        let explorer = builtin(name).ok_or_else(|| SearchError::Internal(format!("no built-in explorer {name}")))?;
        techniques.push((format!("ss-{name}"), Technique::Ss(explorer)));
    }
    let actors: Vec<ActorId> = program.actors(&program.initial()).iter().map(|a| a.id).collect();
    let (k, _) = depth_report("pct", program, config, DEFAULT_PCT_DEPTH, None)?;
    techniques.push(("rs".into(), Technique::Rs));
    techniques.push(("pct".into(), Technique::Pct(actors, DEFAULT_PCT_DEPTH, k)));
    techniques.push(("pos".into(), Technique::Pos));
    techniques.push(("pctcp".into(), Technique::Pctcp(DEFAULT_PCT_DEPTH, k)));
    techniques.push(("surw".into(), Technique::Surw(profile(program, config))));
    let walks: Vec<(String, Technique)> = techniques[3..]
        .iter()
        .map(|(name, t)| (format!("{name}-cut"), t.clone()))
        .collect();
    let member = |(name, technique): (String, Technique), cut: bool| Member {
        weight: if matches!(technique, Technique::Ss(_)) { 2 } else { 1 },
        cut,
        steps: 0,
        probed: 0,
        probes: 0,
        name,
        technique,
        taken: 0,
        next: (0, 0),
        exhausted: false,
    };
    let mut all: Vec<Member> = techniques.into_iter().map(|t| member(t, false)).collect();
    all.extend(walks.into_iter().map(|t| member(t, true)));
    Ok(all)
}

/// A member's next probe.
#[derive(Clone, Copy, Debug)]
pub(super) struct Probe {
    /// Its cap.
    pub(super) cap: usize,
    /// It runs in every epoch, whatever the member's due.
    pub(super) every_epoch: bool,
}

/// The shortest depth of a cut member's walks, and the least cap of a
/// probe.
const SHORTEST: u64 = 16;

impl Member {
    /// The coordinates of its next `n` samples, advancing past them (SS
    /// moves to the next delay bound when one is done, and is exhausted
    /// past `max_delays`).
    pub(super) fn plan(&mut self, n: u64, inputs_ss: &SsParams, max_delays: Option<u32>) -> Vec<Coord> {
        let mut coords = Vec::new();
        for _ in 0..n {
            match &self.technique {
                Technique::Ss(explorer) => {
                    let (db, i) = self.next;
                    if max_delays.is_some_and(|m| db > m) {
                        self.exhausted = true;
                        break;
                    }
                    coords.push((db, i));
                    self.next = if i + 1 < inputs_ss.round_size(db, explorer.is_randomized()) {
                        (db, i + 1)
                    } else {
                        (db.saturating_add(1), 0)
                    };
                }
                _ => coords.push((u32::from(self.cut), self.taken + coords.len() as u64)),
            }
        }
        coords
    }

    /// Whether its samples are still of unknown cost: none complete, and
    /// not cut members (whose cost is at most their depth). Such a member
    /// runs probes: its next sample cut at [`Member::probe_cap`].
    pub(super) fn probing(&self) -> bool {
        self.taken == 0 && !self.cut
    }

    /// Its next probe while [`Member::probing`], when `due` steps are its
    /// due so far. Stratified sampling: its first sample cut at four times
    /// its due (at least 16 steps), when it has run fewer steps than its
    /// due; each cap is then more than four times the last, so the probes
    /// of a sample of `L` steps run fewer than `4L / 3` steps before the
    /// sample runs whole, and the member is never more than four times its
    /// due ahead. A random walk: its first walk cut at 64 steps, then 256,
    /// 1,024, ..., one in every epoch whatever its due (a walk is one
    /// execution, and a third of the deep table's bugs need no more than
    /// the first), so that its probes run fewer than `4L / 3 + 64` steps.
    pub(super) fn probe_cap(&self, due: u64) -> Option<Probe> {
        if !self.probing() {
            return None;
        }
        let (cap, every_epoch) = match self.technique {
            Technique::Ss(_) => (due.saturating_mul(4).max(SHORTEST), false),
            _ => ((4 * SHORTEST) << (2 * self.probes.min(24)), true),
        };
        Some(Probe {
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            every_epoch,
        })
    }

    /// The coordinates of its next sample, without moving past it (a probe
    /// that is cut short runs again).
    pub(super) fn peek(&self) -> Coord {
        match self.technique {
            Technique::Ss(_) => self.next,
            _ => (u32::from(self.cut), self.taken),
        }
    }

    /// Its mean steps per complete sample (`None` before the first).
    pub(super) fn mean(&self) -> Option<u64> {
        (self.taken > 0).then(|| ((self.steps - self.probed) / self.taken).max(1))
    }

    /// The depth at which a cut member cuts its walks when `due` steps
    /// are its due so far: `sqrt(16 · due)`, from 16 up to `max_steps`, so
    /// that it has taken about `sqrt(due / 16)` walks at each depth (`None` for the other members). A race early
    /// in a long execution is found at a fraction of the walk's cost; the
    /// uncut member finds one late in it.
    pub(super) fn depth(&self, due: u64, max_steps: usize) -> Option<usize> {
        self.cut.then(|| {
            let d = ((16 * due) as f64).sqrt() as u64;
            d.clamp(SHORTEST, max_steps.max(1) as u64) as usize
        })
    }

    /// Its sample at `coord`, as the technique alone runs it; with a
    /// `cap`, each of its executions is cut at that many steps: a
    /// violation found before any execution reached the cap is the one
    /// the technique alone finds, and any other is dropped (a cut
    /// execution changes where stratified sampling places its next
    /// delay), so that the sample stays an ordinary sample of the
    /// technique as far as it ran. With whether the cap cut it: one of
    /// its executions reached the cap (below `max_steps`; a violation at
    /// that step included, conservatively).
    pub(super) fn sample<P: Program>(
        &self,
        inputs: &Inputs<'_, P>,
        (round, index): Coord,
        cap: Option<usize>,
        scratch: &mut Scratch<P::State, AnyExplorer>,
    ) -> Result<(Sample, bool), SearchError> {
        let config = inputs.config;
        let seed = stream_seed(config.seed, u64::from(round), index, 0);
        let program = inputs.program;
        let cap = cap.filter(|&c| c < config.max_steps);
        let limits = Limits {
            max_steps: cap.unwrap_or(config.max_steps),
            ..inputs.limits
        };
        let (max_steps, deadlock) = (limits.max_steps, config.deadlock);
        let mut sample = match &self.technique {
            Technique::Ss(explorer) => {
                let seeds = inputs.ss.seeds(config.seed, round, index);
                let prepared = prepare(explorer, &inputs.actors0, seeds.explorer);
                let r = run_sample(program, &inputs.s0, &prepared, seeds, round, &limits, scratch);
                batch_sample(r, round, explorer.name())?
            }
            Technique::Rs => run_one(program, &mut UniformDriver::new(seed), max_steps, deadlock),
            Technique::Pct(actors, depth, k) => run_one(
                program,
                &mut PctDriver::new(seed, actors, *depth, *k),
                max_steps,
                deadlock,
            ),
            Technique::Pos => run_one(program, &mut PosDriver::new(seed), max_steps, deadlock),
            Technique::Pctcp(depth, k) => {
                run_one(program, &mut PctcpDriver::new(seed, *depth, *k), max_steps, deadlock)
            }
            Technique::Surw(profile) => run_one(program, &mut SurwDriver::new(profile, seed), max_steps, deadlock),
        };
        let cut = cap.is_some_and(|c| sample.longest >= c as u64);
        if cut {
            sample.violation = None;
        }
        Ok((sample, cut))
    }

    /// The kind of path its schedules hold and the explorer they name.
    pub(super) fn path_kind(&self) -> (PathKind, Option<&str>) {
        match &self.technique {
            Technique::Ss(explorer) => (PathKind::Delays, Some(explorer.name())),
            _ => (PathKind::Choices, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::RandomProgram;

    /// A cut member's walk that finds a violation finds the one the same
    /// walk finds uncut, with the same path (so its schedule is the
    /// technique's own); a walk cut before its violation finds none. On
    /// random programs with a planted violation, for every walk
    /// technique, 20 walks each, at the depths 1 to 8.
    #[test]
    fn a_cut_walk_finds_what_the_whole_walk_finds_before_the_cut() {
        let (mut found, mut cut_before) = (0, 0);
        for seed in 0..6 {
            let p = RandomProgram::generate(seed, false, true);
            let program = Watched::bare(&p);
            let config = Config::default().seed(seed).max_steps(60);
            let all = members(program, &config).unwrap();
            let s0 = program.initial();
            let inputs = Inputs {
                actors0: program.actors(&s0),
                s0,
                program,
                config: &config,
                limits: Limits {
                    max_steps: config.max_steps,
                    deadlock: config.deadlock,
                    deadline: None,
                    stop: None,
                },
                ss: SsParams::default(),
            };
            let mut scratch = Scratch::default();
            for member in all.iter().filter(|m| m.cut) {
                for k in 0..20 {
                    let whole = member.sample(&inputs, (1, k), None, &mut scratch).unwrap().0;
                    for depth in 1..=8 {
                        let cut = member.sample(&inputs, (1, k), Some(depth), &mut scratch).unwrap().0;
                        match (&cut.violation, &whole.violation) {
                            (Some(c), Some(w)) => {
                                assert_eq!(c, w, "{} seed {seed} walk {k} depth {depth}", member.name);
                                found += 1;
                            }
                            (Some(_), None) => panic!("{} found what the whole walk does not", member.name),
                            (None, Some(_)) => cut_before += 1,
                            (None, None) => {}
                        }
                    }
                }
            }
        }
        assert_eq!((found, cut_before), (22, 98));
    }
}
