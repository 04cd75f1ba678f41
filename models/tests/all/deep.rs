//! The deep (long-workload) configurations: every seeded bug of every model
//! has one, it resolves, names the parameters it runs with, sets the
//! model's workload parameter, and a random walk of the model at that
//! configuration runs at least 300 steps on average (pinned: 20 walks,
//! seed 1, one thread).

use mcheck_checker::search;
use mcheck_checker::{Config, Model, Outcome, Params};
use mcheck_models::{chain, deep_params, lostupdate, multipaxos, paxos, raft, twopc, twophase_packed, workload_param};

/// `set` (`--set` syntax) resolved against `model`'s parameters.
fn resolve<M: Model>(model: &M, set: &str) -> Params {
    let info = model.info();
    let overrides: Vec<(String, String)> = set
        .split(',')
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("key=value");
            (k.to_string(), v.to_string())
        })
        .collect();
    Params::resolve(info.name, &info.params, &overrides).unwrap()
}

/// Total steps of 20 random walks (seed 1, one thread) of the correct
/// version of `model` at `params`: the length of the workload, which the
/// walks of a buggy version cut short at the violation.
fn walk_steps<M: Model>(model: &M, params: &Params) -> u64 {
    let config = Config::default().max_schedules(20).threads(1).seed(1);
    let r = search::rs(&model.build(params, None), &config).unwrap();
    let what = format!("{} {params}", model.info().name);
    assert_eq!(r.outcome, Outcome::Bounded, "{what}: {:?}", r.violation);
    assert_eq!(r.schedules, 20, "{what}");
    r.steps
}

/// For each bug of `model`, its deep configuration and the total steps of
/// 20 walks there (`steps[i]` for bug `i + 1`).
fn check<M: Model>(model: &M, steps: &[u64]) {
    let info = model.info();
    let workload = workload_param(info.name).expect("a workload parameter");
    let spec = info
        .params
        .iter()
        .find(|p| p.name == workload)
        .expect("a parameter of the model");
    assert!(spec.max >= 50, "{}: {workload} goes up to {} only", info.name, spec.max);
    assert_eq!(info.bugs.len(), steps.len(), "{}", info.name);
    assert_eq!(deep_params(info.name, 0), None);
    assert_eq!(deep_params(info.name, steps.len() as u32 + 1), None);
    let mut got = Vec::new();
    for bug in info.bugs.iter().map(|b| b.id) {
        let set = deep_params(info.name, bug).expect("a deep configuration");
        let params = resolve(model, set);
        let what = format!("{} bug {bug} [{set}]", info.name);
        // What it names is what the run uses, in `Params`' own order.
        assert_eq!(model.effective_params(&params, Some(bug)), params, "{what}");
        assert!(set.contains(&format!("{workload}=")), "{what}: the workload is not set");
        assert!(params.get(workload) > spec.default, "{what}");
        let total = walk_steps(model, &params);
        assert!(total >= 20 * 300, "{what}: mean length {}", total / 20);
        got.push(total);
    }
    assert_eq!(got, steps, "{}: total steps of 20 walks per bug", info.name);
}

#[test]
fn chain_deep_configurations() {
    // Means 789, 639 (two crashes), 1009 (four servers).
    check(
        &chain::Chain,
        &[15775, 15775, 15775, 15775, 12778, 15775, 20185, 15775, 15775, 15775],
    );
}

#[test]
fn lostupdate_deep_configuration() {
    // Mean 1547 (compare-and-swap retries included).
    check(&lostupdate::LostUpdate, &[30940; 2]);
}

#[test]
fn multipaxos_deep_configurations() {
    // Mean 533 (the client waits for its replies).
    check(&multipaxos::MultiPaxos, &[10659; 3]);
}

#[test]
fn paxos_deep_configurations() {
    // Mean 524.
    check(&paxos::Paxos, &[10490; 4]);
}

#[test]
fn twopc_deep_configurations() {
    // Mean 524.
    check(&twopc::TwoPc, &[10488; 6]);
}

#[test]
fn twophase_packed_deep_configuration() {
    // The specification never ends: every walk runs to --max-steps.
    check(
        &twophase_packed::TwoPhasePacked,
        &[20 * mcheck_checker::config::DEFAULT_MAX_STEPS as u64],
    );
}

#[test]
fn raft_deep_configurations() {
    // Means 454 (three elections), 419, 441 (two elections), 427 (a read
    // after the commands).
    check(&raft::Raft, &[9086, 8384, 8384, 8384, 8817, 8533, 8384]);
}

#[test]
fn unknown_models_have_none() {
    assert_eq!(deep_params("nosuch", 1), None);
    assert_eq!(workload_param("nosuch"), None);
    // twophase has no workload parameter (see `deep_params`).
    assert_eq!((deep_params("twophase", 1), workload_param("twophase")), (None, None));
    assert_eq!(workload_param("2pc"), Some("transactions"));
    assert_eq!(deep_params("lostupdate", 1), Some("clients=3,increments=60"));
}
