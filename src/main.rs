/// Freed small blocks stay with their thread: SES frees the states of
/// machine models in bursts that overflow the system allocator's own
/// per-thread cache (`mcheck::alloc`).
#[global_allocator]
static ALLOC: mcheck::alloc::ThreadCache = mcheck::alloc::ThreadCache;

fn main() -> std::process::ExitCode {
    mcheck::main_with(&mcheck::Registry::builtin(), std::env::args().skip(1))
}
