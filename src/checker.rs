//! The checker builder: a model or a program, a strategy, an explorer and
//! budgets, checked inside `cargo test`. [`Checker::assert_no_violation`],
//! [`Checker::assert_verified`] and [`Checker::assert_reachable`] panic
//! with what `mcheck run` prints: the violation, its trace and races, the
//! schedule that `mcheck replay` replays (and a Mermaid sequence diagram of
//! it), or the budget that stopped the search.
//!
//! ```
//! use mcheck::models::lostupdate::LostUpdate;
//! use mcheck::prelude::*;
//!
//! let lostupdate = || Checker::model(&LostUpdate).set("clients", 2).set("increments", 1);
//! assert_eq!(lostupdate().assert_verified().states, 52);
//! let failed = std::panic::catch_unwind(|| lostupdate().bug(1).assert_no_violation());
//! assert!(failed.is_err()); // with the trace, the races, the diagram and the schedule
//! ```

use crate::args::StrategyName;
use crate::printing::{header, header_of, violation_text};
use crate::render;
use crate::settings;
use mcheck_checker::check::{Checked, check_instance, check_program, check_program_reaching, check_reaching_instance};
use mcheck_checker::coverage::reached_property;
use mcheck_checker::explorers::RunToCompletion;
use mcheck_checker::{
    AnyExplorer, BoundedBy, Config, Explorer, Instance, Model, Outcome, Program, Report, Schedule, SearchError,
    Strategy,
};
use std::fmt;
use std::time::Duration;

/// A check of a model ([`Checker::model`]) or a program ([`Checker::new`]),
/// set up with builder methods and run by [`run`](Checker::run) or one of
/// the assertions. By default it checks what `mcheck run -s ses` checks:
/// [`Strategy::Ses`] with run to completion (`rtc`), safety and liveness,
/// on one thread, with [`Config::default`]'s budgets (SES, not the CLI's
/// default portfolio: a test's counterexample is then the one with the
/// fewest delays, and its run uses one core;
/// `.strategy(Strategy::Portfolio)` asks for the portfolio).
///
/// The assertions panic with the report as `mcheck run` prints it, so that
/// a failing `cargo test` shows the counterexample; an input error (an
/// unknown parameter or bug, a broken explorer contract) panics with its
/// message.
pub struct Checker<'a> {
    subject: Box<dyn Subject + 'a>,
    settings: Settings,
}

/// What a [`Checker`] runs its subject with.
#[derive(Clone, Debug)]
struct Settings {
    strategy: Strategy,
    explorer: AnyExplorer,
    config: Config,
    /// The model's seeded bug.
    bug: Option<u32>,
    /// The model's parameters set, as `--set` gives them.
    set: Vec<(String, String)>,
}

/// What a [`Checker`] checks: a model or a program, behind one interface
/// so that the checker is one type.
trait Subject {
    /// Run `settings` on it: the search, or with `property` the search for
    /// that reachability property; the counterexample replayed once, its
    /// races explained when `explain`.
    fn run(&self, settings: &Settings, property: Option<&str>, explain: bool) -> Result<Ran, SearchError>;

    /// Its name, for [`Checker`]'s `Debug`.
    fn name(&self) -> String;
}

/// A check that ran: the line that says what ran, the result, and whether
/// its schedules name a model (which `mcheck replay` takes).
struct Ran {
    title: String,
    checked: Checked,
    named: bool,
}

/// A model's programs, by parameters and bug.
struct OfModel<'a, M>(&'a M);

/// A program that no model builds.
struct OfProgram<'a, P>(&'a P);

impl<M: Model> Subject for OfModel<'_, M> {
    fn run(&self, s: &Settings, property: Option<&str>, explain: bool) -> Result<Ran, SearchError> {
        let model = self.0;
        let instance = Instance::from_overrides(model, &s.set, s.bug).map_err(|e| SearchError::Input(e.to_string()))?;
        let (strategy, explorer, config) = (&s.strategy, s.explorer.clone(), &s.config);
        let checked = match property {
            None => check_instance(model, &instance, strategy, explorer, config, explain)?,
            Some(p) => check_reaching_instance(model, &instance, p, strategy, explorer, config, explain)?,
        };
        let (explorer, seed) = shown(s);
        let title = header(
            &model.info(),
            instance.params(),
            instance.bug(),
            strategy.name(),
            explorer,
            seed,
        );
        Ok(Ran {
            title,
            checked,
            named: true,
        })
    }

    fn name(&self) -> String {
        format!("model {}", self.0.info().name)
    }
}

impl<P: Program> Subject for OfProgram<'_, P> {
    fn run(&self, s: &Settings, property: Option<&str>, explain: bool) -> Result<Ran, SearchError> {
        if let Some(what) = [("bug", s.bug.is_some()), ("set", !s.set.is_empty())]
            .iter()
            .find_map(|(what, given)| given.then_some(what))
        {
            return Err(SearchError::Input(format!(
                "`{what}` chooses a model's seeded bug or parameters, and this checker checks a program (Checker::new): build the program to check instead, or check its model (Checker::model)"
            )));
        }
        let (program, strategy, explorer, config) = (self.0, &s.strategy, s.explorer.clone(), &s.config);
        let checked = match property {
            None => check_program(program, strategy, explorer, config, explain)?,
            Some(p) => check_program_reaching(program, p, strategy, explorer, config, explain)?,
        };
        let (explorer, seed) = shown(s);
        Ok(Ran {
            title: header_of("program", strategy.name(), explorer, seed),
            checked,
            named: false,
        })
    }

    fn name(&self) -> String {
        "a program".into()
    }
}

/// What the header of a check with `s` names beside the strategy.
fn shown(s: &Settings) -> (Option<&str>, Option<u64>) {
    settings::shown(StrategyName::of(&s.strategy), s.explorer.name(), s.config.seed)
}

impl<'a> Checker<'a> {
    /// A checker of `model` at its default parameters, without a bug (see
    /// [`bug`](Checker::bug) and [`set`](Checker::set)). Its schedules name
    /// the model: `mcheck replay` (or the CLI of [`crate::main_with`] for
    /// a model of your own) replays them.
    ///
    /// ```
    /// use mcheck::models::lostupdate::LostUpdate;
    /// use mcheck::prelude::*;
    ///
    /// let report = Checker::model(&LostUpdate).bug(1).set("clients", 2).set("increments", 1).run().unwrap();
    /// assert_eq!((report.violation.unwrap().step, report.states), (9, 28));
    /// ```
    pub fn model<M: Model>(model: &'a M) -> Checker<'a> {
        Checker::of(Box::new(OfModel(model)))
    }

    /// A checker of `program`, a transition system of your own or machines
    /// ([`Machines`](crate::machine::Machines)) that no [`Model`] names.
    /// Its schedules name no model: they replay with [`crate::replay()`].
    ///
    /// ```
    /// use mcheck::prelude::*;
    /// use mcheck::testing::RandomProgram;
    ///
    /// let program = RandomProgram::generate(3, false, true);
    /// let report = Checker::new(&program).run().unwrap();
    /// assert_eq!(report.is_violation(), program.oracle().violation_reachable);
    /// ```
    pub fn new<P: Program>(program: &'a P) -> Checker<'a> {
        Checker::of(Box::new(OfProgram(program)))
    }

    fn of(subject: Box<dyn Subject + 'a>) -> Checker<'a> {
        Checker {
            subject,
            settings: Settings {
                strategy: Strategy::Ses,
                explorer: RunToCompletion::new().into(),
                config: Config::default().liveness(true),
                bug: None,
                set: Vec::new(),
            },
        }
    }

    /// Switch on the model's seeded bug `id` (`mcheck run --bug`).
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// let found = Checker::model(&LostUpdate).bug(1).set("clients", 2).set("increments", 1).run().unwrap();
    /// assert!(found.is_violation());
    /// ```
    pub fn bug(mut self, id: u32) -> Self {
        self.settings.bug = Some(id);
        self
    }

    /// Set the model's parameter `name` to `value` (`mcheck run --set`);
    /// the others keep their defaults. The check fails with an input error
    /// naming the valid parameters and values if the model has no such
    /// parameter or `value` is out of its range.
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// let err = Checker::model(&LostUpdate).set("servers", 2).run().unwrap_err();
    /// assert!(err.to_string().contains("valid parameters: clients, increments"), "{err}");
    /// ```
    pub fn set(mut self, name: &str, value: u64) -> Self {
        self.settings.set.push((name.to_string(), value.to_string()));
        self
    }

    /// Search with `strategy` (default [`Strategy::Ses`]).
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// let dfs = Checker::model(&LostUpdate).strategy(Strategy::Dfs).set("clients", 2).set("increments", 1);
    /// assert_eq!(dfs.assert_verified().strategy, "dfs");
    /// ```
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.settings.strategy = strategy;
        self
    }

    /// Follow `explorer` where the strategy follows one (SES, SS, hybrid;
    /// default run to completion): a built-in one
    /// ([`explorers`](crate::explorers), [`builtin`](crate::builtin)), a
    /// model's own ([`Model::explorer`]) or yours
    /// ([`AnyExplorer::custom`]).
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// let rr = Checker::model(&LostUpdate).explorer(builtin("rr").unwrap()).set("clients", 2).set("increments", 1);
    /// assert_eq!(rr.assert_verified().explorer.as_deref(), Some("rr"));
    /// ```
    pub fn explorer(mut self, explorer: impl Into<AnyExplorer>) -> Self {
        self.settings.explorer = explorer.into();
        self
    }

    /// The seed of every random choice (sampling, PRR; default 0).
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// let rs = Checker::model(&LostUpdate).bug(1).strategy(Strategy::Rs).seed(7).run().unwrap();
    /// assert_eq!((rs.seed, rs.is_violation()), (7, true));
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.settings.config.seed = seed;
        self
    }

    /// Cut every execution at `steps` steps (default
    /// [`config::DEFAULT_MAX_STEPS`](crate::config::DEFAULT_MAX_STEPS)):
    /// an exhaustive search that cuts one ends `bounded`.
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// use mcheck::BoundedBy;
    ///
    /// let cut = Checker::model(&LostUpdate).max_steps(5).run().unwrap();
    /// assert_eq!(cut.bounded_by, Some(BoundedBy::MaxSteps));
    /// ```
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.settings.config.max_steps = steps;
        self
    }

    /// Stop after delay (or preemption) bound `bound`.
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// use mcheck::{BoundedBy, Outcome};
    ///
    /// let bound0 = Checker::model(&LostUpdate).bug(1).max_delays(0).run().unwrap();
    /// assert_eq!((bound0.outcome, bound0.bounded_by), (Outcome::Bounded, Some(BoundedBy::MaxDelays)));
    /// ```
    pub fn max_delays(mut self, bound: u32) -> Self {
        self.settings.config.max_delays = Some(bound);
        self
    }

    /// Stop after `states` distinct states (exhaustive strategies).
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// # use mcheck::BoundedBy;
    /// let some = Checker::model(&LostUpdate).max_states(100).run().unwrap();
    /// assert_eq!(some.bounded_by, Some(BoundedBy::States));
    /// ```
    pub fn max_states(mut self, states: u64) -> Self {
        self.settings.config.max_states = Some(states);
        self
    }

    /// Stop after `schedules` executions (sampling strategies).
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// # use mcheck::BoundedBy;
    /// let rs = Checker::model(&LostUpdate).strategy(Strategy::Rs).max_schedules(50).run().unwrap();
    /// assert_eq!((rs.schedules, rs.bounded_by), (50, Some(BoundedBy::Schedules)));
    /// ```
    pub fn max_schedules(mut self, schedules: u64) -> Self {
        self.settings.config.max_schedules = Some(schedules);
        self
    }

    /// Stop after `limit` of wall-clock time (default: none for the
    /// exhaustive strategies, a minute for sampling).
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// use std::time::Duration;
    ///
    /// let minute = Checker::model(&LostUpdate).time_limit(Duration::from_secs(60)).set("increments", 1);
    /// assert!(minute.run().unwrap().is_verified());
    /// ```
    pub fn time_limit(mut self, limit: Duration) -> Self {
        self.settings.config.time_limit = Some(limit);
        self
    }

    /// Search on `threads` worker threads (default 1; 0: one per core).
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// let two = Checker::model(&LostUpdate).threads(2).set("clients", 2).set("increments", 1);
    /// assert_eq!(two.assert_verified().states, 52);
    /// ```
    pub fn threads(mut self, threads: usize) -> Self {
        self.settings.config.threads = threads;
        self
    }

    /// Report deadlocks as violations (`mcheck run --deadlock`).
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// let report = Checker::model(&LostUpdate).deadlock(true).set("clients", 2).set("increments", 1).run().unwrap();
    /// assert!(report.monitors.contains(&"deadlocks".to_string()));
    /// ```
    pub fn deadlock(mut self, on: bool) -> Self {
        self.settings.config.deadlock = on;
        self
    }

    /// Check liveness too (on by default, as `mcheck run --liveness on`;
    /// ARCHITECTURE.md, "Liveness").
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// use mcheck::ViolationKind;
    ///
    /// // Bug 2 leaves increments undone, which only the liveness check sees.
    /// let gives_up = || Checker::model(&LostUpdate).bug(2).set("clients", 2).set("increments", 1);
    /// let stuck = gives_up().run().unwrap();
    /// assert_eq!(stuck.violation.unwrap().violation.kind, ViolationKind::Liveness);
    /// assert!(gives_up().liveness(false).run().unwrap().is_verified());
    /// ```
    pub fn liveness(mut self, on: bool) -> Self {
        self.settings.config.liveness = on;
        self
    }

    /// Every engine setting at once (the builder's other methods change
    /// fields of it): for what they do not cover, such as
    /// [`Config::exact_bound`] or [`Config::symmetry`]. It replaces the
    /// checker's defaults: [`Config::default`] checks no liveness.
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// let config = Config::default().symmetry(true);
    /// let orbits = Checker::model(&LostUpdate).config(config).set("clients", 2).set("increments", 1);
    /// assert!(orbits.assert_verified().symmetry);
    /// ```
    pub fn config(mut self, config: Config) -> Self {
        self.settings.config = config;
        self
    }

    /// Run the check: the report, its schedule complete.
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// use mcheck::Outcome;
    ///
    /// let report = Checker::model(&LostUpdate).set("clients", 2).set("increments", 1).run().unwrap();
    /// assert_eq!((report.outcome, report.states), (Outcome::Verified, 52));
    /// ```
    pub fn run(&self) -> Result<Report, SearchError> {
        Ok(self.subject.run(&self.settings, None, false)?.checked.report)
    }

    /// The check that an assertion makes; panics with the error.
    #[track_caller]
    fn ran(&self, assertion: &str, property: Option<&str>) -> Ran {
        match self.subject.run(&self.settings, property, true) {
            Ok(ran) => ran,
            Err(e) => panic!("mcheck: {assertion} could not check: {e}"),
        }
    }

    /// Run the check and return its report; panic if it finds a violation,
    /// with the report as `mcheck run` prints it (the violation, its
    /// trace, the races it depends on and the schedule to paste into
    /// `mcheck replay`) and a Mermaid sequence diagram of the trace. A
    /// search stopped by a budget passes (see
    /// [`assert_verified`](Checker::assert_verified)).
    ///
    /// ```should_panic
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// // Panics: "mcheck: assert_no_violation failed: a violation was found ... Trace: ..."
    /// Checker::model(&LostUpdate).bug(1).assert_no_violation();
    /// ```
    #[track_caller]
    pub fn assert_no_violation(&self) -> Report {
        let assertion = "assert_no_violation";
        let ran = self.ran(assertion, None);
        if ran.checked.report.is_violation() {
            fail(assertion, "a violation was found", &ran);
        }
        ran.checked.report
    }

    /// Run the check and return its report; panic unless it is
    /// `verified` (every reachable state covered, none violates): with the
    /// counterexample as [`assert_no_violation`](Checker::assert_no_violation)
    /// does, or naming the budget that stopped the search and the builder
    /// method that sets it.
    ///
    /// ```should_panic
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// // Panics: "... the search ended bounded (stopped by --max-states; raise or remove `max_states(..)`), not verified"
    /// Checker::model(&LostUpdate).max_states(100).assert_verified();
    /// ```
    #[track_caller]
    pub fn assert_verified(&self) -> Report {
        let assertion = "assert_verified";
        let ran = self.ran(assertion, None);
        let report = &ran.checked.report;
        match report.outcome {
            Outcome::Verified => ran.checked.report,
            Outcome::Violation => fail(assertion, "a violation was found", &ran),
            outcome => fail(
                assertion,
                &format!("the search ended {}, not verified", not_covered(outcome, report)),
                &ran,
            ),
        }
    }

    /// Search for the reachability property `property` (one of the
    /// program's [`Covers::sometimes`](crate::Covers::sometimes)), as `mcheck
    /// run --coverage` does, and return the schedule that reaches a state
    /// where it holds (it replays there: [`crate::replay_model`]). Panic
    /// if the search found a violation first (with its counterexample),
    /// proved the property unreachable, or stopped at a budget before
    /// reaching it (naming the budget), or if the program has no such
    /// property (naming those it has).
    ///
    /// ```
    /// # use mcheck::models::lostupdate::LostUpdate;
    /// # use mcheck::prelude::*;
    /// let done = Checker::model(&LostUpdate).set("clients", 2).set("increments", 1).assert_reachable("all-clients-done");
    /// assert_eq!(done.expected_step, Some(9));
    /// ```
    #[track_caller]
    pub fn assert_reachable(&self, property: &str) -> Schedule {
        let assertion = format!("assert_reachable({property:?})");
        let ran = self.ran(&assertion, Some(property));
        let report = &ran.checked.report;
        let reached = report.violation.as_ref().and_then(|f| reached_property(&f.violation));
        match (report.outcome, report.schedule.as_ref()) {
            (Outcome::Violation, Some(schedule)) if reached == Some(property) => schedule.clone(),
            (Outcome::Violation, _) => fail(
                &assertion,
                "a violation was found before the property was reached",
                &ran,
            ),
            (Outcome::Verified, _) => fail(
                &assertion,
                "the property is unreachable: the search covered every reachable state, and it holds in none",
                &ran,
            ),
            (outcome, _) => fail(
                &assertion,
                &format!(
                    "the property was not reached before the search ended {}",
                    not_covered(outcome, report)
                ),
                &ran,
            ),
        }
    }
}

/// `outcome` (neither a violation nor `verified`) with why the search
/// covered less than everything and what to change:
/// `bounded (stopped by --max-states; raise or remove `max_states(..)`)`.
fn not_covered(outcome: Outcome, report: &Report) -> String {
    let Some(by) = report.bounded_by else {
        return outcome.to_string();
    };
    let advice = match by {
        BoundedBy::Time => "raise or remove `time_limit(..)`",
        BoundedBy::States => "raise or remove `max_states(..)`",
        BoundedBy::Schedules => "raise or remove `max_schedules(..)`",
        BoundedBy::Memory => "raise `Config::max_memory` (through `config(..)`) or check a smaller configuration",
        BoundedBy::MaxDelays => "raise or remove `max_delays(..)`",
        BoundedBy::MaxSteps => "raise `max_steps(..)` above the longest execution",
        BoundedBy::Interrupted => "its `Config::stop` flag was raised",
        BoundedBy::Sampling => "use an exhaustive strategy (Strategy::Ses, Dfs or Pb) to verify",
    };
    format!("{outcome} ({}; {advice})", render::bounded_text(by))
}

/// Fail `assertion`, panicking with [`failure`]'s message.
#[track_caller]
fn fail(assertion: &str, what: &str, ran: &Ran) -> ! {
    panic!("{}", failure(assertion, what, ran))
}

/// The panic message of a failed `assertion`: what failed, what ran, then
/// the report as `mcheck run` prints it (the counterexample, with a
/// Mermaid sequence diagram of its trace, and the summary).
fn failure(assertion: &str, what: &str, ran: &Ran) -> String {
    let Checked { report, counterexample } = &ran.checked;
    let mut text = format!("mcheck: {assertion} failed: {what}\n{}\n", ran.title);
    if let (Some(found), Some(schedule), Some(c)) = (&report.violation, &report.schedule, counterexample) {
        let races = match &c.explanation {
            Some(Ok(explained)) => explained.summary(),
            Some(Err(e)) => format!("not explained: {e}"),
            None => "not explained".into(),
        };
        text.push_str(&violation_text(found, &c.execution, &races, schedule, ran.named, false));
        text.push_str(match ran.named {
            true => "\nSequence diagram (Mermaid; `mcheck replay --format mermaid` draws it too):\n",
            false => "\nSequence diagram (Mermaid):\n",
        });
        text.push_str(&render::mermaid(&c.execution, false));
    }
    text.push('\n');
    text.push_str(&render::summary(report));
    text
}

impl fmt::Debug for Checker<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checker")
            .field("subject", &self.subject.name())
            .field("settings", &self.settings)
            .finish()
    }
}
