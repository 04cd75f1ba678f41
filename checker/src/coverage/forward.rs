//! The methods a wrapper program passes to the program it wraps.

/// Inside `impl<P: Program> Program for Wrapper<'_, P>` whose field
/// `program: &P` is the wrapped program: every method but `execute` and
/// `execute_traced`, passed on unchanged (`forward_program!(without
/// canonical)`: also without `canonical_fingerprint`; `(without
/// counting)`: without `count_transition` and `count_state`, for a wrapper
/// that counts).
macro_rules! forward_program {
    () => {
        $crate::coverage::forward_program!(without counting);
        $crate::coverage::forward_program!(counting);
    };
    (without counting) => {
        $crate::coverage::forward_program!(common);

        #[inline]
        fn canonical_fingerprint(&self, s: &P::State) -> Option<u64> {
            self.program.canonical_fingerprint(s)
        }
    };
    (without canonical) => {
        $crate::coverage::forward_program!(common);
        $crate::coverage::forward_program!(counting);
    };
    (counting) => {
        #[inline(always)]
        fn count_transition(&self, s: &P::State, actor: $crate::program::ActorId, alt: u32) {
            self.program.count_transition(s, actor, alt)
        }

        #[inline(always)]
        fn count_state(&self, s: &P::State) {
            self.program.count_state(s)
        }
    };
    (common) => {
        #[inline]
        fn initial(&self) -> P::State {
            self.program.initial()
        }

        #[inline]
        fn actors(&self, s: &P::State) -> Vec<$crate::program::ActorInfo> {
            self.program.actors(s)
        }

        #[inline]
        fn enabled(&self, s: &P::State, out: &mut Vec<$crate::program::Enabled>) {
            self.program.enabled(s, out)
        }

        #[inline]
        fn deadlock(&self, s: &P::State) -> Option<$crate::program::Violation> {
            self.program.deadlock(s)
        }

        #[inline]
        fn actor_name(&self, s: &P::State, actor: $crate::program::ActorId) -> String {
            self.program.actor_name(s, actor)
        }

        #[inline]
        fn view(&self, s: &P::State) -> Option<$crate::program::StateView> {
            self.program.view(s)
        }

        #[inline]
        fn cover_step(
            &self,
            s: &P::State,
            actor: $crate::program::ActorId,
            alt: u32,
            out: &mut Vec<$crate::coverage::Hit>,
        ) {
            self.program.cover_step(s, actor, alt, out)
        }

        #[inline]
        fn cover_state(&self, s: &P::State, out: &mut Vec<$crate::coverage::Hit>) {
            self.program.cover_state(s, out)
        }

        #[inline]
        fn coverage_space(&self) -> Vec<$crate::coverage::Hit> {
            self.program.coverage_space()
        }

        #[inline]
        fn sometimes(&self) -> Vec<&'static str> {
            self.program.sometimes()
        }

        #[inline]
        fn holds(&self, s: &P::State, property: usize) -> bool {
            self.program.holds(s, property)
        }

        #[inline]
        fn liveness(&self) -> Option<&dyn $crate::program::Monitors<P::State>> {
            self.program.liveness()
        }

        #[inline]
        fn check_symmetry(&self, s: &P::State, seed: u64) -> Result<(), $crate::orbits::SymmetryMismatch> {
            self.program.check_symmetry(s, seed)
        }

        #[inline]
        fn symmetry_groups(&self) -> Vec<String> {
            self.program.symmetry_groups()
        }
    };
}

pub(crate) use forward_program;
