//! The sampling members of the portfolio: stratified sampling with each
//! built-in explorer, and the random baselines. A member's `k`-th sample
//! is exactly the `k`-th sample the technique run alone with the same
//! seed takes (the same seeds, the same execution), so the schedule of a
//! violation it finds is an ordinary schedule of that technique.

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
#[derive(Debug)]
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
    /// Samples taken.
    pub(super) taken: u64,
    /// Steps of those samples (not SURW's one profiling run).
    pub(super) steps: u64,
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
/// explorer, then RS, PCT, POS, PCTCP and SURW with their default
/// settings.
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
    Ok(techniques
        .into_iter()
        .map(|(name, technique)| Member {
            steps: 0,
            name,
            technique,
            taken: 0,
            next: (0, 0),
            exhausted: false,
        })
        .collect())
}

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
                _ => coords.push((0, self.taken + coords.len() as u64)),
            }
        }
        coords
    }

    /// Its sample at `coord`, as the technique alone runs it; with a
    /// `cap`, each of its executions is cut at that many steps: a
    /// violation found before any execution reached the cap is the one
    /// the technique alone finds, and any other is dropped (a cut
    /// execution changes where stratified sampling places its next
    /// delay), so that the sample stays an ordinary sample of the
    /// technique as far as it ran.
    pub(super) fn sample<P: Program>(
        &self,
        inputs: &Inputs<'_, P>,
        (round, index): Coord,
        cap: Option<usize>,
        scratch: &mut Scratch<P::State, AnyExplorer>,
    ) -> Result<Sample, SearchError> {
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
        if cap.is_some_and(|c| sample.longest >= c as u64) {
            sample.violation = None;
        }
        Ok(sample)
    }

    /// The kind of path its schedules hold and the explorer they name.
    pub(super) fn path_kind(&self) -> (PathKind, Option<&str>) {
        match &self.technique {
            Technique::Ss(explorer) => (PathKind::Delays, Some(explorer.name())),
            _ => (PathKind::Choices, None),
        }
    }
}
