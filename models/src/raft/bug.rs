//! The seeded bugs of the model: each one's [`BugSpec`] tells its race.

use mcheck_checker::BugSpec;
use mcheck_checker::model::SeededBug;
use serde::{Deserialize, Serialize};

/// The seeded bugs, each a mistake real Raft implementations made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Bug {
    /// The leader commits an entry of an earlier term by counting its
    /// replicas (the paper's Figure 8).
    Figure8Commit,
    /// A server grants its vote without the log up-to-date check (the
    /// election restriction of the Raft paper, section 5.4.1, missing as
    /// in jgroups-raft issue 14 and akka-raft issue 30; a row of the noise
    /// benchmark, `crate::noise::ROWS`).
    VoteWithoutLogCheck,
    /// A follower truncates its log after the previous index on every
    /// `Append`, not only on a conflict.
    TruncateOnEveryAppend,
    /// The leader sets a follower's match index from its own log instead of
    /// from the request the success answers.
    MatchFromNextIndex,
    /// Voted-for is kept in volatile state: a restarted server votes again.
    VolatileVote,
    /// The leader appends every client command it receives, without looking
    /// for it in its log (no client session table): a retry is appended,
    /// committed and applied twice.
    RetryAppendedTwice,
    /// The client arms its timer for a command's first attempt only: a
    /// retry waits for its answer without a deadline.
    RetryWithoutTimer,
}

impl SeededBug for Bug {
    const TABLE: &'static [(Bug, BugSpec)] = &[
        (
            Bug::Figure8Commit,
            BugSpec::new(
                1,
                "commit-old-term",
                "the leader commits an index as soon as a majority holds it, whatever the term of its entry (the paper's Figure 8; runs with elections raised to 3): server0, leader of term 1, appends the client's c1 but its Append is not handled yet; server1 wins term 2 with server2's vote, and the client's retry makes it append c1 in term 2; server0 wins term 3 with server2's vote (its last term 1 beats server2's empty log), replicates its term-1 entry to server2 and commits it by counting two replicas; server1 then wins term 4 with server2's vote (last term 2 beats 1) although it holds (t2 c1) at index 1: leader-completeness names both leaders and the committed entry that server1 will overwrite",
            ),
        ),
        (
            Bug::VoteWithoutLogCheck,
            BugSpec::new(
                2,
                "vote-without-log-check",
                "a server grants its vote to any candidate of a new term without comparing their logs: server0 replicates the client's c1 to server2 and commits it while its Append to server1 is still on its way; server1 times out, asks for votes in term 2 with an empty log, server2 grants it, and server1 becomes a leader that lacks the committed c1 (leader-completeness)",
            ),
        ),
        (
            Bug::TruncateOnEveryAppend,
            BugSpec::new(
                3,
                "truncate-on-append",
                "a follower that accepts an Append deletes everything after its previous index before appending, instead of only the entries that conflict: the new leader's heartbeat (an Append with no entries after index 0) reaches a follower after the leader's later Append carrying c1, which the follower acknowledged and the leader counted to commit and acknowledge c1; the stale heartbeat truncates c1 away, leaving the acknowledged c1 on a minority (durability)",
            ),
        ),
        (
            Bug::MatchFromNextIndex,
            BugSpec::new(
                4,
                "match-from-next-index",
                "on a successful AppendReply the leader sets the follower's match index from its own log (next index = last index + 1) instead of from the request the reply answers: server1 wins term 2 and sends its heartbeats (Appends with no entries); a follower's reply to its heartbeat (it covered index 0) reaches server1 after it appended the client's c1, so server1 counts the follower as holding c1, commits c1 with its own copy only and acknowledges it: the acknowledged c1 is on a minority (durability; with another election, the next leader lacks the committed c1: leader-completeness)",
            ),
        ),
        (
            Bug::VolatileVote,
            BugSpec::new(
                5,
                "volatile-vote",
                "voted-for is not written to stable storage, so a restart forgets the vote (runs with elections raised to 2): server1 and server2 both time out into term 2; server0 grants server1's RequestVote, crashes and restarts, and then grants server2's as well, so both become leaders of term 2 (election-safety)",
            ),
        ),
        (
            Bug::RetryAppendedTwice,
            BugSpec::new(
                6,
                "retry-appended-twice",
                "the leader appends every command a client sends it, without looking for it in its log (no client session table, Raft dissertation §6.3; runs with reads raised to 1): server0 appends c1 and its Append reaches server1; the client's timer fires and it retries c1 at server1, which has meanwhile won term 2 with server2's vote and appends c1 a second time; committing index 2 commits both copies, the client's append returns at index 0, and its read, committed after them, returns [1, 1]: a log with two copies of the one append. No monitor sees it (every server applies the same commands at each index): only the client's history is not linearizable",
            ),
        ),
        (
            Bug::RetryWithoutTimer,
            BugSpec::new(
                7,
                "retry-without-timer",
                "the client arms its timer for a command's first attempt only, so a retry is a request without a deadline: its first attempt times out (server0 has not committed c1 yet), it retries at server1, a follower, which redirects it; with its attempts used up it waits for the timer before giving the command up, and no timer is armed: the execution ends with c1 neither answered nor given up (liveness, monitor answered)",
            ),
        ),
    ];
}
