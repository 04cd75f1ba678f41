//! One run of a strategy as a user asks for it: the search, watched by
//! what the run checks beside the program (the symmetry declaration, a
//! [`Watch`] of the caller's), on the liveness [`Temperature`] for the
//! sampling strategies, followed by the exhaustive liveness check. The
//! searches themselves (the `search` module) know none of this.

use crate::config::Config;
use crate::explorer::Explorer;
use crate::liveness::Temperature;
use crate::orbits::OrbitsChecked;
use crate::program::{Program, ProgramExt};
use crate::report::Report;
use crate::search::{
    SearchError, Strategy, dfs_on, hybrid_on, irs_on, pb_on, pct_on, pctcp_on, portfolio_on, pos_on, rs_on, ses_on,
    ss_on, surw_on,
};
use crate::watch::{Both, Watch, Watched};

/// Run `strategy` on `program` (with `explorer` where it uses one). With
/// `config.liveness`, the sampling strategies run on the
/// [`Temperature`] program, and an
/// exhaustive search (or hybrid) that verified the program goes on to
/// [`liveness::check_into`](crate::liveness::check_into). With
/// `config.symmetry`, the search is watched by the check of the
/// program's declaration ([`OrbitsChecked`]).
///
/// ```
/// use mcheck_checker::explorers::RunToCompletion;
/// use mcheck_checker::testing::RandomProgram;
/// use mcheck_checker::{run, Config, Strategy};
///
/// let program = RandomProgram::generate(1, false, true);
/// let report = run(&program, RunToCompletion::new(), &Strategy::Ses, &Config::default()).unwrap();
/// assert_eq!(report.is_violation(), program.oracle().violation_reachable);
/// assert_eq!(report.monitors, ["safety"]);
/// ```
pub fn run<P: Program, E: Explorer>(
    program: &P,
    explorer: E,
    strategy: &Strategy,
    config: &Config,
) -> Result<Report, SearchError> {
    run_watched(program, None, explorer, strategy, config)
}

/// [`run`] with `watch` told of what the search does (coverage counts, a
/// reachability property): see [`Watch`]'s contract. A mistaken symmetry
/// declaration is an error, never an answer (ARCHITECTURE.md,
/// "Symmetry").
pub fn run_watched<P: Program, E: Explorer>(
    program: &P,
    watch: Option<&dyn Watch<P::State>>,
    explorer: E,
    strategy: &Strategy,
    config: &Config,
) -> Result<Report, SearchError> {
    let mut report = if checks_symmetry(program, config) {
        let orbits = OrbitsChecked::new(program);
        let both = watch.map(|w| Both(w, &orbits));
        let watch: &dyn Watch<P::State> = match &both {
            Some(both) => both,
            None => &orbits,
        };
        let report = run_checked(Watched::new(program, Some(watch)), explorer, strategy, config);
        if let Some(m) = orbits.mismatch() {
            return Err(SearchError::Symmetry(m));
        }
        report?
    } else {
        run_checked(Watched::new(program, watch), explorer, strategy, config)?
    };
    report.monitors = monitors(program, strategy, config);
    Ok(report)
}

/// What [`run`] checks of `program` with `strategy`, in words, for
/// [`Report::monitors`]: safety always (the program's violations, its
/// monitors and invariants), then what the configuration and the
/// program's capabilities add.
pub fn monitors<P: Program>(program: &P, strategy: &Strategy, config: &Config) -> Vec<String> {
    let mut checks = vec!["safety".to_string()];
    if config.deadlock {
        checks.push("deadlocks".into());
    }
    if checks_liveness(program, config) {
        checks.push(match strategy.is_exhaustive() {
            true => "liveness (fair hot cycles, once verified)".into(),
            false => format!(
                "liveness (hot at the end, or for more than {} steps at max-steps {})",
                config.temperature_threshold(),
                config.max_steps
            ),
        });
    }
    if checks_symmetry(program, config) {
        checks.push("the symmetry declaration".into());
    }
    checks
}

/// Whether [`run`] checks `program`'s symmetry declaration (asked for, and
/// the program declares one): the search is then watched.
fn checks_symmetry<P: Program>(program: &P, config: &Config) -> bool {
    config.symmetry && program.canonical_fingerprint(&program.initial()).is_some()
}

/// Whether [`run`] checks liveness (asked for, and the program has
/// liveness properties): a sampling search then runs on the
/// [`Temperature`] program, and every search is followed by the liveness
/// check.
fn checks_liveness<P: Program>(program: &P, config: &Config) -> bool {
    config.liveness && program.liveness().is_some()
}

/// Whether [`run`] searches `program` as it is, with nothing before or
/// after the strategy (no symmetry check, no liveness): then `run` with
/// [`Strategy::Ses`] is exactly [`crate::search::ses`].
pub fn runs_unwrapped<P: Program>(program: &P, config: &Config) -> bool {
    !checks_symmetry(program, config) && !checks_liveness(program, config)
}

/// [`run_watched`] once its watch is chosen.
fn run_checked<P: Program, E: Explorer>(
    program: Watched<'_, P>,
    explorer: E,
    strategy: &Strategy,
    config: &Config,
) -> Result<Report, SearchError> {
    if !checks_liveness(program.program(), config) {
        return run_strategy(program, explorer, strategy, config);
    }
    let mut report = if strategy.is_exhaustive() {
        run_strategy(program, explorer, strategy, config)?
    } else {
        // The temperature judges terminal states (see its docs), so the
        // search runs with deadlock detection on; the schedule says what
        // the user asked.
        let tempered = Temperature::watched(
            program,
            config.max_steps,
            config.temperature_threshold(),
            config.deadlock,
        );
        let judged = config.clone().deadlock(true);
        let watch = program.watch().map(|_| &tempered as &dyn Watch<_>);
        let sampled = Watched::new(&tempered, watch);
        let mut report = match strategy {
            // Its SES member judges the program itself, and is followed by
            // the exhaustive liveness check below once it verified it.
            Strategy::Portfolio => portfolio_on((program, config), (sampled, &judged), explorer)?,
            _ => run_sampling(sampled, explorer, strategy, &judged)?,
        };
        if let Some(schedule) = report.schedule.as_mut() {
            schedule.deadlock = config.deadlock;
        }
        report
    };
    crate::liveness::check_into(program.program(), config, &mut report);
    Ok(report)
}

/// [`run`] without liveness.
fn run_strategy<P: Program, E: Explorer>(
    program: Watched<'_, P>,
    explorer: E,
    strategy: &Strategy,
    config: &Config,
) -> Result<Report, SearchError> {
    match strategy {
        Strategy::Ses => ses_on(program, explorer, config),
        Strategy::Dfs => dfs_on(program, config),
        Strategy::Pb => pb_on(program, config),
        Strategy::Portfolio => portfolio_on((program, config), (program, config), explorer),
        sampling => run_sampling(program, explorer, sampling, config),
    }
}

/// [`run_strategy`] for the sampling strategies (hybrid among them): the
/// only ones that run on the [`Temperature`] program, so that the
/// exhaustive searches are not instantiated for it.
fn run_sampling<P: Program, E: Explorer>(
    program: Watched<'_, P>,
    explorer: E,
    strategy: &Strategy,
    config: &Config,
) -> Result<Report, SearchError> {
    match strategy {
        Strategy::Ss(params) => ss_on(program, explorer, config, params),
        Strategy::Rs => rs_on(program, config),
        Strategy::Irs { step } => irs_on(program, config, *step),
        Strategy::Pct { depth, steps } => pct_on(program, config, *depth, *steps),
        Strategy::Pos => pos_on(program, config),
        Strategy::Pctcp { depth, steps } => pctcp_on(program, config, *depth, *steps),
        Strategy::Surw => surw_on(program, config),
        Strategy::Hybrid(params) => hybrid_on(program, explorer, config, params),
        Strategy::Ses | Strategy::Dfs | Strategy::Pb | Strategy::Portfolio => Err(SearchError::Internal(format!(
            "{} is not a sampling strategy",
            strategy.name()
        ))),
    }
}
