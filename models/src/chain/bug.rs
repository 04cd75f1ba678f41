//! The seeded bugs of the model: each one's [`BugSpec`] tells its race.

use mcheck_checker::BugSpec;
use mcheck_checker::model::SeededBug;
use serde::{Deserialize, Serialize};

/// The seeded bugs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Bug {
    /// A promoted tail does not rebuild its store.
    StaleStore,
    /// No resend of unacknowledged updates to a new successor.
    NoResend,
    /// An unknown acknowledgement removes the oldest entry.
    AckWrongEntry,
    /// Clients handle only the notification for their pending request.
    ClientNotify,
    /// The master repairs a double failure from its stale chain.
    StaleDoubleFailure,
    /// A new head numbers updates from its own stale counter.
    NewHeadSeq,
    /// A predecessor prunes what its new successor has.
    PruneOnLastSeq,
    /// The head tells the client its update is done on receipt.
    EarlyUpdateDone,
    /// Clients take any update acknowledgement for their current update.
    ClientTrustsStaleDone,
    /// A new successor with an empty history sends no `LastSeq`.
    SilentEmptySuccessor,
}

impl SeededBug for Bug {
    const TABLE: &'static [(Bug, BugSpec)] = &[
        (
            Bug::StaleStore,
            BugSpec::new(
                1,
                "promoted-tail-stale-store",
                "only the tail keeps a store; when the tail crashes and its predecessor is promoted (BecomeTail), the new tail commits its unacknowledged updates but does not rebuild its store from its history, so a later query of a key updated before the crash returns a stale value (query monitor); needs the crash after the update passed the predecessor",
            ),
        ),
        (
            Bug::NoResend,
            BugSpec::new(
                2,
                "no-resend",
                "when a middle server crashes, its predecessor, on the new successor's LastSeq, marks the link ready but does not resend the updates of its sent list above that sequence number; an update the crashed server had not passed on (or that the predecessor held while linking) is lost between the two (propagation monitor); needs the crash while an update is between the head and the middle server",
            ),
        ),
        (
            Bug::AckWrongEntry,
            BugSpec::new(
                3,
                "ack-wrong-entry",
                "an acknowledgement for a sequence number that is not in sent removes the oldest entry of sent instead of being ignored. After the middle server crashes, the tail's re-acknowledgement on NewPred of an update the head already pruned (the crashed server passed its acknowledgement on) reaches the head after the client's next update entered it, and removes that update from sent although the tail does not have it (propagation monitor)",
            ),
        ),
        (
            Bug::ClientNotify,
            BugSpec::new(
                4,
                "client-ignores-notify",
                "the client handles NewHead only while an update is pending and NewTail only while a query is pending; a tail change that arrives while the client waits for an update (or a head change during a query) is an unhandled event; needs the crash of the tail while the client's update is on its way",
            ),
        ),
        (
            Bug::StaleDoubleFailure,
            BugSpec::new(
                5,
                "stale-double-failure",
                "runs with failures=2 (build raises it, and servers to 3): when two neighbouring servers crash before the master's ping round, the master repairs each one on its own from the chain as it was before the round, so it links the survivor to the other crashed server (NewSucc/NewPred to a dead server) or promotes a dead one, and notifies the clients of a dead head or tail: a live server or a client is left waiting on a removed server with no repair on the way (propagation monitor). The injector must crash twice in a row and both servers must handle their Fail before the master's ping round; The injector is created last, so RR and RTC run it only when nothing else can run, after the client is done and nothing is at stake: they need a delay to move it ahead of the workload and the search spends its first strata on other interleavings (PRR likewise). chain-custom runs the servers first until the tail acknowledges the first update, then the injector and the master first: both crashes happen back to back while the client's query is pending, with no delay",
            ),
        ),
        (
            Bug::NewHeadSeq,
            BugSpec::new(
                6,
                "new-head-stale-seq",
                "the head numbers updates with its own counter of updates it received instead of continuing after its history; a server promoted to head after the head crashes restarts from its (small) counter and gives an update a sequence number it already has, so its history is no longer sorted (propagation monitor)",
            ),
        ),
        (
            Bug::PruneOnLastSeq,
            BugSpec::new(
                7,
                "prune-on-lastseq",
                "runs with servers=4 (build raises it): when a middle server crashes, its predecessor takes the new successor's LastSeq as an acknowledgement and drops from sent (and acknowledges upstream) every update the successor has; but the successor is not the tail, and it still waits for the tail's acknowledgement of those updates, so the predecessor's sent list no longer covers them (propagation monitor); with a three-server chain the new successor is the tail and the shortcut happens to be right",
            ),
        ),
        (
            Bug::EarlyUpdateDone,
            BugSpec::new(
                8,
                "early-update-done",
                "the head answers UpdDone to the client as soon as it appends the update, before the tail has it; the client's next operation, the query of that key, reaches the tail before the forwarded update and returns the old value after the update returned (a stale read). No monitor sees it (the tail's answers agree with what it acknowledged): only the clients' history is not linearizable",
            ),
        ),
        (
            Bug::ClientTrustsStaleDone,
            BugSpec::new(
                9,
                "client-trusts-stale-done",
                "the client takes any UpdDone as the acknowledgement of its current update, without comparing operation numbers; when the head crashes with the client's update on its way, the client resends it to the new head, which has it already, committed, and answers UpdDone again: the second UpdDone (for the old operation) reaches the client while its next update (of another key) is on its way; the client queries that key and reads nothing after its put returned. No monitor sees it (the tail's answers agree with what it acknowledged): only the clients' history is not linearizable",
            ),
        ),
        (
            Bug::SilentEmptySuccessor,
            BugSpec::new(
                10,
                "silent-empty-successor",
                "a liveness bug: a server given a new predecessor (NewPred) sends its LastSeq only when its history is not empty, reasoning that with nothing to report the predecessor will resend everything anyway; but the predecessor holds its forwards until the LastSeq arrives, so when the middle server crashes before any update reached the tail, the head never settles its new link, the client's update waits in its sent list forever and the chain is never repaired. No safety monitor sees it (the unsettled link is skipped by the propagation monitor): the execution ends with the client unanswered (liveness monitor answered)",
            ),
        ),
    ];
}
