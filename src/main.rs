fn main() -> std::process::ExitCode {
    mcheck::main_with(&mcheck::Registry::builtin(), std::env::args().skip(1))
}
