//! [`Check`]: runs a property over a strategy as `proptest!` does, and says how many cases ran
//! and with which seed.

use super::properties::PropertyResult;
use proptest::strategy::Strategy;
use proptest::test_runner::{Config, FileFailurePersistence, RngSeed, TestError, TestRunner};
use std::io::Write;

/// One property run: a name, a proptest [`Config`], and where failures are persisted.
///
/// [`Check::run`] prints `name: N cases passed (seed S)` (straight to stderr, past the test
/// harness's capture), or panics with the minimal failing input after shrinking, the failure's
/// message and the seed that reproduces the run (`PROPTEST_RNG_SEED=S`). A case that takes 5 s
/// or more is reported as it finishes (`name: case K took T s (seed S)`), and with
/// `MERGEPATH_PROPERTY_TRACE` set every run prints its seed before its first case and every
/// case its number before it starts, so a run that never ends can be repeated. With
/// [`Check::persist_beside`], failing cases are saved as proptest regression files next to the
/// test's source and replayed first on later runs.
///
/// ```
/// use mergepath::testing::{self, Backend, Check};
/// use mergepath::Less;
/// let strategy = testing::two_sorted::<u32, _>(testing::lengths::<u32>(100), Less);
/// Check::new("merge_keys u32 on host")
///     .cases(16)
///     .run(strategy, |(a, b)| testing::merge_keys(Backend::Host, &a, &b, Less));
/// ```
pub struct Check {
    name: String,
    config: Config,
}

impl Check {
    /// A run of `name` with proptest's default configuration (which reads `PROPTEST_CASES`,
    /// `PROPTEST_RNG_SEED`, ... from the environment), without failure persistence.
    pub fn new(name: impl Into<String>) -> Self {
        Check { name: name.into(), config: Config { failure_persistence: None, ..Config::default() } }
    }

    /// Runs `cases` cases (overriding `PROPTEST_CASES`).
    pub fn cases(mut self, cases: u32) -> Self {
        self.config.cases = cases;
        self
    }

    /// The whole proptest configuration (shrink limits, fork, ...).
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Persists failing cases in `<source_file without .rs>.proptest-regressions` beside the
    /// source file (pass `file!()`), and replays the ones found there first.
    pub fn persist_beside(mut self, source_file: &'static str) -> Self {
        self.config.source_file = Some(source_file);
        self.config.failure_persistence = Some(Box::new(FileFailurePersistence::SourceParallel("proptest-regressions")));
        self
    }

    /// Runs `test` on values of `strategy`; panics on a failure (see [`Check`]). Returns the
    /// number of cases that passed.
    pub fn run<S: Strategy>(mut self, strategy: S, test: impl Fn(S::Value) -> PropertyResult) -> u32
    where
        S::Value: std::fmt::Debug,
    {
        let seed = match self.config.rng_seed {
            RngSeed::Fixed(seed) => seed,
            RngSeed::Random => {
                let seed = random_seed();
                self.config.rng_seed = RngSeed::Fixed(seed);
                seed
            }
        };
        let cases = self.config.cases;
        let trace = std::env::var_os("MERGEPATH_PROPERTY_TRACE").is_some();
        if trace {
            let _ = writeln!(std::io::stderr(), "{}: running {cases} cases (seed {seed})", self.name);
        }
        let mut runner = TestRunner::new(self.config);
        let case = std::cell::Cell::new(0u32);
        let timed = |value: S::Value| {
            let (start, k) = (std::time::Instant::now(), case.replace(case.get() + 1));
            if trace {
                let _ = writeln!(std::io::stderr(), "{}: case {k} starting", self.name);
            }
            let result = test(value);
            let took = start.elapsed();
            if took >= SLOW_CASE {
                let _ = writeln!(std::io::stderr(), "{}: case {k} took {:.1} s (seed {seed})", self.name, took.as_secs_f64());
            }
            result
        };
        match runner.run(&strategy, timed) {
            Ok(()) => {
                let _ = writeln!(std::io::stderr(), "{}: {cases} cases passed (seed {seed})", self.name);
                cases
            }
            Err(TestError::Fail(reason, minimal)) => {
                panic!("{}: property failed: {reason}\nminimal failing input: {minimal:#?}\nreproduce with PROPTEST_RNG_SEED={seed}", self.name)
            }
            Err(TestError::Abort(reason)) => panic!("{}: aborted: {reason} (seed {seed})", self.name),
        }
    }
}

/// A case that takes this long is reported with the run's seed as it finishes, so a slow input
/// can be found again.
const SLOW_CASE: std::time::Duration = std::time::Duration::from_secs(5);

/// A seed from the clock and the process, for runs without a fixed one.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.finish()
}
