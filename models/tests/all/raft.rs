//! The Raft model: exact state counts against the BFS oracle, the bug table
//! and parameter defaults, every seeded bug found with a delay and
//! replayed, and each monitor catching a hand-made bad state.

use crate::common;
use common::bfs;

use mcheck_checker::explorers::builtin;
use mcheck_checker::lin::{Entry as Event, LogOp, LogRet};
use mcheck_checker::model::SeededBug;
use mcheck_checker::search;
use mcheck_checker::{Config, Model, Outcome, ViolationKind};
use mcheck_checker::{Params, Strategy, check_model, replay_model};
use mcheck_models::raft::{
    Bug, Cfg, Client, Entry, Monitor, Note, PARAMS, Raft, Role, Server, answered, check, leader_elected, observe,
};

fn program(set: &[(&str, &str)], bug: Option<u32>) -> <Raft as Model>::Program {
    common::program(&Raft, set, bug)
}

#[test]
fn bug_numbers_and_defaults_have_one_source() {
    let info = Raft.info();
    assert_eq!(info.bugs.len(), 7);
    for (i, spec) in info.bugs.iter().enumerate() {
        assert_eq!(spec.id, i as u32 + 1);
        let bug = Bug::from_id(spec.id).unwrap();
        assert_eq!(bug.id(), spec.id);
        assert_eq!(Bug::TABLE[i].0, bug);
    }
    assert_eq!(Bug::from_id(0), None);
    assert_eq!(Bug::from_id(8), None);
    let cfg = Cfg::default();
    let fields = [
        cfg.servers,
        cfg.requests,
        cfg.elections,
        cfg.network,
        cfg.duplicates,
        cfg.crashes,
        cfg.reads,
        cfg.noise,
    ];
    let defaults: Vec<u64> = PARAMS.iter().map(|p| p.default).collect();
    assert_eq!(defaults, fields.map(u64::from));
    assert_eq!(defaults, [3, 1, 1, 2, 1, 1, 0, 0]);
}

#[test]
fn exact_state_counts() {
    for (set, states, transitions) in [
        (
            &[
                ("requests", "1"),
                ("elections", "0"),
                ("crashes", "0"),
                ("network", "0"),
            ][..],
            708,
            1935,
        ),
        (
            &[
                ("requests", "0"),
                ("elections", "2"),
                ("crashes", "0"),
                ("network", "0"),
            ][..],
            5488,
            14177,
        ),
        (
            &[
                ("requests", "1"),
                ("elections", "1"),
                ("crashes", "0"),
                ("network", "0"),
            ][..],
            51791,
            158375,
        ),
        (
            &[
                ("servers", "2"),
                ("requests", "1"),
                ("elections", "1"),
                ("crashes", "1"),
                ("network", "1"),
            ][..],
            3626,
            10693,
        ),
        (
            &[
                ("servers", "2"),
                ("requests", "1"),
                ("elections", "0"),
                ("crashes", "1"),
                ("network", "3"),
            ][..],
            1395,
            4557,
        ),
        (
            &[
                ("requests", "1"),
                ("elections", "0"),
                ("crashes", "0"),
                ("network", "3"),
                ("duplicates", "2"),
            ][..],
            16177,
            96262,
        ),
    ] {
        let p = program(set, None);
        let r = search::dfs(&p, &Config::default()).unwrap();
        assert_eq!(r.outcome, Outcome::Verified, "{set:?}");
        assert_eq!(bfs(&p), (states, transitions), "{set:?}");
        assert_eq!((r.states, r.transitions), (states, transitions), "{set:?}");
    }
}

/// Finds `bug` with SES and `explorer` in the default configuration, pins
/// the states, delays and monitor, checks that zero-delay RR and RTC miss
/// it, and replays the counterexample through its text form.
fn check_bug(bug: Bug, explorer: &str, states: u64, delays: u32, monitor: &str) -> String {
    check_bug_of_kind(bug, explorer, states, delays, monitor, ViolationKind::Monitor)
}

fn check_bug_of_kind(bug: Bug, explorer: &str, states: u64, delays: u32, monitor: &str, kind: ViolationKind) -> String {
    common::assert_each_bug_needs_a_delay(&Raft, [bug.id()]);
    let p = program(&[], Some(bug.id()));
    let r = search::ses(&p, builtin(explorer).unwrap(), &Config::default()).unwrap();
    assert_eq!(r.outcome, Outcome::Violation, "{bug:?}");
    let found = r.violation.clone().unwrap();
    assert_eq!(found.violation.kind, kind, "{bug:?}");
    assert_eq!(found.violation.machine.as_deref(), Some(monitor), "{bug:?}");
    assert_eq!((r.states, r.bound_reached), (states, delays), "{bug:?}");
    common::assert_replays(&p, "raft", explorer, &r, delays);
    found.violation.message
}

#[test]
fn bug1_commit_old_term() {
    let message = check_bug(Bug::Figure8Commit, "rtc", 390316, 7, "leader-completeness");
    assert_eq!(
        message,
        "leader server1 of term 4 lacks the entry (t1 c1) at index 1 that leader server0 committed in term 3; it holds (t2 c1) there"
    );
}

#[test]
fn bug6_retry_appended_twice_is_visible_only_to_the_client() {
    let message = check_bug_of_kind(
        Bug::RetryAppendedTwice,
        "rtc",
        BUG6_STATES,
        BUG6_DELAYS,
        "linearizability",
        ViolationKind::Linearizability,
    );
    // The timeline shows the append and the read that saw it twice.
    assert!(message.contains("Read"), "{message}");
    assert!(message.contains("Entries([1, 1])"), "{message}");
}

const BUG6_STATES: u64 = 7309;
const BUG6_DELAYS: u32 = 4;

/// Bug 7 is a liveness bug: SES verifies its safety, and the liveness pass
/// that follows finds an execution that ends with the client's command
/// owed; the lasso replays, and without liveness checking the search
/// verifies the bug away. The test runs on a FIFO network without
/// crashes, where the bug needs only the retry; the default configuration
/// finds it too, at 794,780 states.
#[test]
fn bug7_retry_without_timer_ends_hot() {
    let overrides = [("network", "0"), ("crashes", "0")].map(|(k, v)| (k.to_string(), v.to_string()));
    let params = Params::resolve("raft", &PARAMS, &overrides).unwrap();
    let run = |liveness: bool| {
        let config = Config::default().liveness(liveness);
        check_model(
            &Raft,
            &params,
            Some(7),
            &Strategy::Ses,
            builtin("rtc").unwrap(),
            &config,
        )
        .unwrap()
    };
    let report = run(true);
    let found = report.violation.clone().expect("a liveness violation");
    assert_eq!(found.violation.kind, ViolationKind::Liveness);
    assert_eq!(found.violation.machine.as_deref(), Some("answered"));
    assert_eq!((report.states, found.step), BUG7_FOUND);
    let schedule = report.schedule.unwrap();
    assert!(schedule.cycle.is_empty(), "the execution ends hot");
    let ex = replay_model(&Raft, None::<mcheck_checker::explorers::AnyExplorer>, &schedule, false).unwrap();
    assert_eq!(ex.violation.unwrap(), found);
    assert!(run(false).is_verified());
}

const BUG7_FOUND: (u64, usize) = (27819, 14);

#[test]
fn bug2_vote_without_log_check() {
    check_bug(Bug::VoteWithoutLogCheck, "rtc", 863, 3, "leader-completeness");
}

#[test]
fn bug3_truncate_on_append() {
    check_bug(Bug::TruncateOnEveryAppend, "rtc", 4021, 4, "durability");
}

#[test]
fn bug4_match_from_next_index() {
    check_bug(Bug::MatchFromNextIndex, "rtc", 24122, 6, "durability");
}

#[test]
fn bug5_volatile_vote() {
    check_bug(Bug::VolatileVote, "rtc", 175741, 7, "election-safety");
}

fn server(id: u8, term: u8, log: &[(u8, u8)], leader: bool) -> Server {
    let cfg = Cfg::default();
    let mut s = Server::new(&cfg, id);
    s.term = term;
    s.log = log.iter().map(|&(term, cmd)| Entry { term, cmd }).collect();
    if !leader {
        s.role = Role::Follower;
    } else if id != 0 {
        s.role = Server::new(&cfg, 0).role;
    }
    s
}

fn monitor_of(s: Result<(), mcheck_checker::machine::MonitorError>) -> Option<&'static str> {
    s.err().map(|e| e.monitor)
}

#[test]
fn election_safety_catches_two_leaders_in_a_term() {
    let mut mon = Monitor::default();
    assert_eq!(observe(&mut mon, &Note::Leader { term: 2, id: 1 }), Ok(()));
    assert_eq!(observe(&mut mon, &Note::Leader { term: 3, id: 2 }), Ok(()));
    let e = observe(&mut mon, &Note::Leader { term: 2, id: 2 }).unwrap_err();
    assert_eq!(
        (e.monitor, e.message.as_str()),
        ("election-safety", "two leaders in term 2: server1 and server2")
    );
}

#[test]
fn state_machine_safety_catches_different_commands_at_an_index() {
    let mut mon = Monitor::default();
    let applied = |server, index, cmd| Note::Applied { server, index, cmd };
    assert_eq!(observe(&mut mon, &applied(0, 1, 1)), Ok(()));
    assert_eq!(observe(&mut mon, &applied(1, 1, 1)), Ok(()));
    assert_eq!(observe(&mut mon, &applied(1, 2, 2)), Ok(()));
    assert_eq!(
        monitor_of(observe(&mut mon, &applied(2, 2, 3))),
        Some("state-machine-safety")
    );
    let entry = |term, cmd| Entry { term, cmd };
    let committed = |entry, by, term| Note::Committed {
        index: 1,
        entry,
        by,
        term,
    };
    assert_eq!(observe(&mut mon, &committed(entry(1, 1), 0, 1)), Ok(()));
    assert_eq!(observe(&mut mon, &committed(entry(1, 1), 1, 2)), Ok(()));
    assert_eq!(
        monitor_of(observe(&mut mon, &committed(entry(2, 1), 1, 2))),
        Some("state-machine-safety")
    );
}

#[test]
fn log_matching_catches_logs_that_agree_on_a_term_but_not_before() {
    let cfg = Cfg::default();
    let mon = Monitor::default();
    let a = server(0, 3, &[(1, 1), (3, 2)], false);
    let b = server(1, 3, &[(2, 1), (3, 2)], false);
    let c = server(2, 3, &[(1, 1)], false);
    assert_eq!(check(&cfg, &[&a, &c], &mon), Ok(()));
    assert_eq!(check(&cfg, &[&b, &c], &mon), Ok(()));
    let e = check(&cfg, &[&a, &b, &c], &mon).unwrap_err();
    assert_eq!(e.monitor, "log-matching");
    assert!(
        e.message
            .starts_with("server0 and server1 both hold a term-3 entry at index 2"),
        "{}",
        e.message
    );
}

#[test]
fn leader_completeness_catches_a_leader_without_a_committed_entry() {
    let cfg = Cfg::default();
    let mut mon = Monitor::default();
    let e = Entry { term: 1, cmd: 1 };
    observe(
        &mut mon,
        &Note::Committed {
            index: 1,
            entry: e,
            by: 0,
            term: 3,
        },
    )
    .unwrap();
    let follower = server(0, 4, &[], false);
    let same_term = server(1, 3, &[(2, 1)], true);
    assert_eq!(check(&cfg, &[&follower, &same_term], &mon), Ok(()));
    let later = server(1, 4, &[(2, 1)], true);
    let err = check(&cfg, &[&later], &mon).unwrap_err();
    assert_eq!(err.monitor, "leader-completeness");
    let holder = server(2, 4, &[(1, 1)], true);
    assert_eq!(check(&cfg, &[&holder], &mon), Ok(()));
}

#[test]
fn durability_catches_an_acknowledged_command_on_a_minority() {
    let cfg = Cfg::default();
    let mut mon = Monitor::default();
    let (a, b, c) = (
        server(0, 1, &[(1, 1)], false),
        server(1, 1, &[(1, 1)], false),
        server(2, 1, &[], false),
    );
    assert_eq!(check(&cfg, &[&a, &c, &c], &mon), Ok(()));
    observe(&mut mon, &Note::Acked(1)).unwrap();
    assert_eq!(check(&cfg, &[&a, &b, &c], &mon), Ok(()));
    let e = check(&cfg, &[&a, &c, &c], &mon).unwrap_err();
    assert_eq!(
        (e.monitor, e.message.as_str()),
        (
            "durability",
            "acknowledged command c1 is in the log of only 1 of 3 servers (server0): fewer than a majority"
        )
    );
}

#[test]
fn linearizability_catches_a_log_read_with_a_command_twice() {
    let mut mon = Monitor::default();
    let client = |e| Note::Client(e);
    let ok = [
        Event::Invoke {
            process: 1,
            op: LogOp::Append(1),
        },
        Event::Return {
            process: 1,
            ret: LogRet::Index(0),
        },
        Event::Invoke {
            process: 2,
            op: LogOp::Read,
        },
    ];
    for e in ok {
        assert_eq!(observe(&mut mon, &client(e)), Ok(()));
    }
    // A read that returns [1] is linearizable, one that returns [1, 1] not.
    let mut good = mon.clone();
    let read = |v: Vec<u64>| {
        client(Event::Return {
            process: 2,
            ret: LogRet::Entries(v),
        })
    };
    assert_eq!(observe(&mut good, &read(vec![1])), Ok(()));
    let e = observe(&mut mon, &read(vec![1, 1])).unwrap_err();
    assert_eq!(e.monitor, "linearizability");
    assert_eq!(e.kind, ViolationKind::Linearizability);
}

#[test]
fn answered_is_hot_exactly_while_an_operation_is_owed() {
    let cfg = Cfg::default();
    let mut c = Client::new();
    assert!(answered(&cfg, &c).is_none(), "before its first command");
    c.cmd = 1;
    c.attempts = 2;
    let e = answered(&cfg, &c).unwrap();
    assert_eq!(
        (e.monitor, e.message.as_str()),
        (
            "answered",
            "the client's c1 (attempt 2, last sent to server0) is neither answered nor given up"
        )
    );
    c.cmd = 2;
    assert!(answered(&cfg, &c).is_none(), "done with its one command");
}

#[test]
fn leader_elected_is_hot_without_a_leader_of_the_highest_term_while_a_timeout_is_pending() {
    let old_leader = server(0, 1, &[], true);
    let candidate = {
        let mut s = server(1, 2, &[], false);
        s.role = Role::Candidate { votes: 0b10 };
        s
    };
    let follower = server(2, 2, &[], false);
    let servers = [&old_leader, &candidate, &follower];
    let e = leader_elected(&servers, true).unwrap();
    assert_eq!(
        (e.monitor, e.message.as_str()),
        (
            "leader-elected",
            "no server leads term 2 and an election timeout is still pending"
        )
    );
    assert!(leader_elected(&servers, false).is_none(), "the budget is spent");
    let new_leader = server(1, 2, &[], true);
    assert!(leader_elected(&[&old_leader, &new_leader, &follower], true).is_none());
}

/// The correct model with reads (through the log) and liveness on: its
/// client's history is linearizable and nothing owed is left unpaid, over
/// the whole state graph (SES with RTC, then the liveness pass).
#[test]
fn correct_model_is_linearizable_and_live() {
    for (set, note) in [
        (&[("reads", "1"), ("elections", "0"), ("crashes", "0")][..], LIVE_LOSSY),
        (&[("servers", "2"), ("reads", "1"), ("network", "1")][..], LIVE_TWO),
    ] {
        let overrides: Vec<(String, String)> = set.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let params = Params::resolve("raft", &PARAMS, &overrides).unwrap();
        let config = Config::default().liveness(true);
        let r = check_model(&Raft, &params, None, &Strategy::Ses, builtin("rtc").unwrap(), &config).unwrap();
        assert!(r.is_verified(), "{set:?}: {:?}", r.violation);
        assert_eq!(bfs(&program(set, None)).0, r.states, "{set:?}");
        assert!(r.notes.iter().any(|n| n.starts_with(note)), "{set:?}: {:?}", r.notes);
    }
}

const LIVE_LOSSY: &str = "liveness: 80462 states (33789 hot), 501345 transitions";
const LIVE_TWO: &str = "liveness: 164725 states (79764 hot), 619841 transitions";
