//! The machine runtime: P-style state machines with FIFO input queues.
