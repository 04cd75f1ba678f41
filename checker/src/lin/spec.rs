//! Sequential specifications: the plain objects that client histories are
//! checked against (ARCHITECTURE.md, "Linearizability").

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::Hash;

/// A sequential object: its state, its operations and what they return.
///
/// # Contract
///
/// * `apply` is a pure function: the same state and operation give the same
///   new state and return value.
/// * `key`, when it gives `Some` for every operation of a history, must be
///   P-compositional: operations on different keys never affect each
///   other's return values or state (a key-value map's keys). The checker
///   then checks the history key by key, each part from `init()`.
/// * The types are `Ord` so that sets of states are kept in a canonical
///   order (the incremental [`super::Tracker`] is part of hashed states).
pub trait SequentialSpec: Clone + Debug + Default + Send + Sync {
    /// The object's state.
    type State: Clone + Ord + Hash + Debug + Send + Sync;
    /// An operation (with its arguments).
    type Op: Clone + Ord + Hash + Debug + Send + Sync;
    /// What an operation returns.
    type Ret: Clone + Ord + Hash + Debug + Send + Sync;

    /// The initial state.
    fn init(&self) -> Self::State;

    /// Apply `op` to `state`: the new state and the return value.
    fn apply(&self, state: &Self::State, op: &Self::Op) -> (Self::State, Self::Ret);

    /// The partition of `op` for P-compositional checking (the key of a
    /// key-value operation). Default: none (the history is one part).
    fn key(&self, _op: &Self::Op) -> Option<u64> {
        None
    }
}

/// A read/write register of `u64`, initially 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Register;

/// An operation of [`Register`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RegOp {
    /// Read the value.
    Read,
    /// Write a value.
    Write(u64),
}

/// What a [`Register`] operation returns (a write returns `Ok`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RegRet {
    /// A write's acknowledgement.
    Ok,
    /// The value read.
    Value(u64),
}

impl SequentialSpec for Register {
    type State = u64;
    type Op = RegOp;
    type Ret = RegRet;

    fn init(&self) -> u64 {
        0
    }

    fn apply(&self, state: &u64, op: &RegOp) -> (u64, RegRet) {
        match *op {
            RegOp::Read => (*state, RegRet::Value(*state)),
            RegOp::Write(v) => (v, RegRet::Ok),
        }
    }
}

/// A key-value map from `u64` to `u64`, initially empty; checked key by
/// key ([`SequentialSpec::key`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KvMap;

/// An operation of [`KvMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum KvOp {
    /// Read a key.
    Get(u64),
    /// Write a key.
    Put(u64, u64),
}

/// What a [`KvMap`] operation returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum KvRet {
    /// A put's acknowledgement.
    Ok,
    /// The value read (`None`: never written).
    Value(Option<u64>),
}

impl SequentialSpec for KvMap {
    type State = BTreeMap<u64, u64>;
    type Op = KvOp;
    type Ret = KvRet;

    fn init(&self) -> BTreeMap<u64, u64> {
        BTreeMap::new()
    }

    fn apply(&self, state: &BTreeMap<u64, u64>, op: &KvOp) -> (BTreeMap<u64, u64>, KvRet) {
        match *op {
            KvOp::Get(k) => (state.clone(), KvRet::Value(state.get(&k).copied())),
            KvOp::Put(k, v) => {
                let mut next = state.clone();
                next.insert(k, v);
                (next, KvRet::Ok)
            }
        }
    }

    fn key(&self, op: &KvOp) -> Option<u64> {
        match *op {
            KvOp::Get(k) | KvOp::Put(k, _) => Some(k),
        }
    }
}

/// An append-only log of `u64`, initially empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Log;

/// An operation of [`Log`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum LogOp {
    /// Append a value.
    Append(u64),
    /// Read the whole log.
    Read,
}

/// What a [`Log`] operation returns.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum LogRet {
    /// An append's position in the log (from 0).
    Index(u64),
    /// The log read.
    Entries(Vec<u64>),
}

impl SequentialSpec for Log {
    type State = Vec<u64>;
    type Op = LogOp;
    type Ret = LogRet;

    fn init(&self) -> Vec<u64> {
        Vec::new()
    }

    fn apply(&self, state: &Vec<u64>, op: &LogOp) -> (Vec<u64>, LogRet) {
        match *op {
            LogOp::Append(v) => {
                let mut next = state.clone();
                next.push(v);
                (next, LogRet::Index(state.len() as u64))
            }
            LogOp::Read => (state.clone(), LogRet::Entries(state.clone())),
        }
    }
}
