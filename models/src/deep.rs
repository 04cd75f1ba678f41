//! The long-workload ("deep") configurations: for every seeded bug of every
//! model, parameters (in `--set` syntax) under which a random walk runs
//! executions of at least 300 steps on average, so that the bug is a race
//! that may come late in a long execution (ARCHITECTURE.md, "Models").
//! `mcheck table --deep` and the scaling experiment run these; the scaling
//! experiment varies [`workload_param`].
//!
//! Each string names the parameters the bug's run actually uses (a bug
//! that needs four chain servers says `servers=4`), and the length is that
//! of the model's workload there: measured on the correct version (a walk
//! of the buggy one ends at the violation), 20 walks, pinned in
//! `models/tests/all/deep.rs`. TwoPhase never ends on its own, so its walks
//! always run to `--max-steps`: `twophase-packed` has a workload parameter
//! (`rounds`), `twophase` (the specification as TLC checks it) has none and
//! no deep configuration, its walks at its defaults being as long.

/// Per model: its name, its workload parameter, and the deep configuration
/// of each seeded bug in `--bug` order (bug `i + 1` at index `i`).
const DEEP: &[(&str, &str, &[&str])] = &[
    (
        "chain",
        "keys",
        &[
            "clients=2,keys=60",
            "clients=2,keys=60",
            "clients=2,keys=60",
            "clients=2,keys=60",
            "clients=2,failures=2,keys=60",
            "clients=2,keys=60",
            "clients=2,keys=60,servers=4",
            "clients=2,keys=60",
            "clients=2,keys=60",
            "clients=2,keys=60",
        ],
    ),
    (
        "lostupdate",
        "increments",
        &["clients=3,increments=60", "clients=3,increments=60"],
    ),
    ("multipaxos", "updates", &["updates=60", "updates=60", "updates=60"]),
    (
        "paxos",
        "proposals",
        &["proposals=20", "proposals=20", "proposals=20", "proposals=20"],
    ),
    (
        "2pc",
        "transactions",
        &[
            "transactions=30",
            "transactions=30",
            "transactions=30",
            "transactions=30",
            "transactions=30",
            "transactions=30",
        ],
    ),
    ("twophase-packed", "rounds", &["rounds=60"]),
    (
        "raft",
        "requests",
        &[
            "elections=3,requests=60",
            "requests=60",
            "requests=60",
            "requests=60",
            "elections=2,requests=60",
            "reads=1,requests=60",
            "requests=60",
        ],
    ),
];

/// The long-workload configuration of seeded bug `bug` of model `model` (in `--set` syntax,
/// e.g. "clients=3,increments=60") used by `mcheck table --deep` and the scaling experiment;
/// `None` for an unknown model or bug. Every seeded bug of every model but `twophase` has
/// one (raft's too: use its requests/elections parameters), chosen so that the mean
/// execution length under a random walk is at least 300 steps.
pub fn deep_params(model: &str, bug: u32) -> Option<&'static str> {
    let (_, _, bugs) = DEEP.iter().find(|(name, _, _)| *name == model)?;
    let index = usize::try_from(bug.checked_sub(1)?).ok()?;
    bugs.get(index).copied()
}

/// The workload parameter of `model` (the one the scaling experiment varies), e.g. "increments".
pub fn workload_param(model: &str) -> Option<&'static str> {
    DEEP.iter()
        .find(|(name, _, _)| *name == model)
        .map(|(_, param, _)| *param)
}
