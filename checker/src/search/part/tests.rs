//! Parts of one search driven by hand as the dataflow drives them: each
//! stratum's transfers delivered until none is in flight, then the next.

use super::{Part, Transfer};
use crate::config::Config;
use crate::program::{ActorId, Program};
use crate::report::{Outcome, Report};
use crate::search::order::{ChoiceOrder, EnabledSet, Natural};
use crate::search::stratified;
use crate::testing::RandomProgram;
use crate::watch::Watched;
use std::sync::Arc;

/// Replays `path` ((depth, index) pairs: at each depth it names, the order
/// moves on that many times before its choice is taken) from s0 for
/// `steps` steps and takes one more; what that step's execution says.
fn replay<O: ChoiceOrder>(program: &RandomProgram, root: &O, path: &[(u32, u32)], steps: u32) -> Result<u32, ()> {
    let (mut s, mut d) = (program.initial(), root.clone());
    let (mut en, mut events) = (Vec::new(), Vec::new());
    let mut moves = path.iter().peekable();
    for depth in 0..=steps {
        en.clear();
        program.enabled(&s, &mut en);
        let ids: Vec<ActorId> = en.iter().map(|e| e.actor).collect();
        let set = EnabledSet::new(&en, &ids);
        if let Some(&(_, index)) = moves.next_if(|m| m.0 == depth) {
            (0..index).for_each(|_| d.advance(&set));
        }
        let (actor, alt) = d.current(&set);
        events.clear();
        if program.execute(&mut s, actor, alt, &mut events).is_err() {
            return if depth == steps { Err(()) } else { Ok(s) };
        }
        d = d.into_child(actor, &events);
    }
    Ok(s)
}

/// Three parts, each owning a third of the keys, count together the
/// states of the single search on random systems (every move costing one,
/// so that there are strata); with a planted violation, the parts stop
/// exactly when one is reachable, and the violation's path, put together
/// from the pieces the parts hold ([`Part::path_here`] from part to part,
/// at least two pieces on some systems), replays to it.
#[test]
fn three_parts_count_the_states_of_one_search_and_a_violations_path_replays() {
    let (mut pieces_seen, mut violations) = (0, 0);
    for seed in 0..60 {
        let plant = seed % 2 == 1;
        let program = Arc::new(RandomProgram::generate(seed, false, plant));
        let order = Natural::charging();
        let config = Config::default();
        let one = stratified::run(Watched::bare(&*program), order, &config, Report::new("t", None, 0, 1)).unwrap();
        let peers = 3;
        let mut parts: Vec<Part<RandomProgram, Natural>> = (0..peers)
            .map(|me| {
                Part::new(
                    Arc::clone(&program),
                    order,
                    config.clone(),
                    me,
                    peers,
                    None,
                    Report::new("t", None, 0, 1),
                )
            })
            .collect();
        let mut stopped = None;
        for (i, p) in parts.iter_mut().enumerate() {
            if p.start().unwrap().is_some() {
                stopped = Some(i);
            }
        }
        while stopped.is_none() {
            // Deliver until nothing is in flight, then the next stratum.
            loop {
                let sent: Vec<Transfer<u32, Natural>> =
                    parts.iter_mut().flat_map(|p| p.away().collect::<Vec<_>>()).collect();
                if sent.is_empty() || stopped.is_some() {
                    break;
                }
                for t in sent {
                    let to = crate::cache::owner(t.key, peers) as usize;
                    let p = &mut parts[to];
                    assert_eq!(p.cache_key(&t.state, &t.order), t.key, "system {seed}");
                    if p.accept(t).unwrap().is_some() {
                        stopped = Some(to);
                        break;
                    }
                }
            }
            for p in &mut parts {
                p.close_stratum(0.0);
            }
            if stopped.is_some() || parts.iter().all(|p| p.pending() == (0, 0)) {
                break;
            }
            for (i, p) in parts.iter_mut().enumerate() {
                p.open();
                if p.resume_while(|_| true).unwrap().is_some() {
                    stopped = Some(i);
                    break;
                }
            }
        }
        let oracle = program.oracle();
        match stopped {
            Some(i) => {
                assert!(plant && oracle.violation_reachable, "system {seed}");
                assert_eq!(one.report.outcome, Outcome::Violation, "system {seed}");
                let (found, (mut path, mut before)) = parts[i].violation().expect("a violation");
                let step = found.step as u32;
                let mut pieces = 1;
                while let Some((w, node)) = before {
                    let (piece, earlier) = parts[w as usize].path_here(node);
                    path.splice(0..0, piece);
                    before = earlier;
                    pieces += 1;
                }
                pieces_seen = pieces_seen.max(pieces);
                violations += 1;
                assert_eq!(
                    replay(&program, &order, &path, step),
                    Err(()),
                    "system {seed}: {path:?}"
                );
            }
            None => {
                assert!(!(plant && oracle.violation_reachable), "system {seed}");
                let states: u64 = parts.iter().map(|p| p.report().states).sum();
                assert_eq!(states, one.report.states, "system {seed}");
                assert_eq!(states, oracle.reachable.len() as u64, "system {seed}");
            }
        }
    }
    assert!(violations >= 5, "{violations} violations");
    assert!(pieces_seen >= 3, "at most {pieces_seen} pieces");
}
