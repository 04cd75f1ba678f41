//! The engine's SES with round robin against an independent SES: the SES
//! floor of the engine bench (`benches/engine/floor_ses.rs`), written for
//! TwoPhase alone from the algorithm (ARCHITECTURE.md, "Stratified exhaustive search (SES)") and the
//! explorer's definition, on its own bit-packed states, queue and table.
//! Every stratum's new states, transitions and deferrals must agree, with
//! the floor's retirement and without it (the plain algorithm).

#[path = "../../benches/engine/floor.rs"]
#[allow(dead_code)]
mod floor;
#[path = "../../benches/engine/floor_ses.rs"]
mod floor_ses;

use mcheck_checker::explorers::RoundRobin;
use mcheck_checker::search;
use mcheck_checker::{Config, Model, Params};
use mcheck_models::twophase_packed::TwoPhasePacked;

/// Each stratum's (new states, transitions, deferrals).
type Strata = Vec<(u64, u64, u64)>;

fn engine(rms: u32) -> Strata {
    let params = Params::resolve(
        "twophase-packed",
        &TwoPhasePacked.info().params,
        &[("rms".into(), rms.to_string())],
    )
    .unwrap();
    let p = TwoPhasePacked.build(&params, None);
    let r = search::ses(&p, RoundRobin::new(), &Config::default()).unwrap();
    r.strata
        .iter()
        .map(|s| (s.new_states, s.transitions, s.deferrals))
        .collect()
}

fn floor(rms: u32, retiring: bool) -> Strata {
    let strata = floor_ses::SesFloor::new(rms).search(retiring);
    strata.iter().map(|s| (s.states, s.transitions, s.deferrals)).collect()
}

#[test]
fn ses_with_round_robin_agrees_with_an_independent_search_in_every_stratum() {
    for rms in 2..=5 {
        let engine = engine(rms);
        assert_eq!(floor(rms, false), engine, "the plain floor, {rms} RMs");
        assert_eq!(floor(rms, true), engine, "the retiring floor, {rms} RMs");
    }
}

#[test]
fn the_floor_reaches_tlcs_states_and_transitions_in_its_strata() {
    // TLC's counts for 3 and 4 RMs (TwoPhase.tla), and the strata the
    // floor takes to reach them.
    for (rms, states, transitions, strata) in [(3, 288, 1_145, 13), (4, 1_568, 8_257, 19)] {
        let f = floor(rms, true);
        let total = |k: fn(&(u64, u64, u64)) -> u64| f.iter().map(k).sum::<u64>();
        assert_eq!(
            (total(|s| s.0), total(|s| s.1), f.len()),
            (states, transitions, strata),
            "{rms} RMs"
        );
    }
}
