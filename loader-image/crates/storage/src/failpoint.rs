//! Crash points for the kill tests. Built only with the `failpoints` feature (fail-rs);
//! without it [`crash_point`] is empty and costs nothing.
//!
//! `FAILPOINTS="<name>=return"` makes the process SIGKILL itself when it reaches the point,
//! `FAILPOINTS="<name>=3*off->return"` on its fourth visit, `<name>=sleep(500)` slows it.
//! A real SIGKILL: no destructor, no cleanup, no buffered write runs, exactly as when the
//! kernel's OOM killer or a node failure ends the load.
//!
//! Points, phase by phase (tests/kill_resume.rs visits each): `parse.chunk` (a parse job
//! done), `parse.dict_spill`, `parse.tuples_spill`, `parse.partial_saved`,
//! `checkpoint.before_rename`, `checkpoint.saved`, `nodes.term`, `nodes.written`,
//! `indexes.sort_push`, `indexes.record`, `indexes.index_done`, `finish.stats`,
//! `finish.synced`, `finish.swap`, `finish.renamed`; delay points `progress.<phase>` and
//! `progress.parse_job` (progress.rs).
//!
//! One point forces a condition that real input does not produce: `parse.terse_dirty=return(N)`
//! makes chunk N (from 0) of every Turtle/TriG file end dirty, as if the splitter had cut a
//! statement (tests/split_restart.rs).

/// Visits a crash point.
#[inline(always)]
pub fn crash_point(name: &'static str) {
    #[cfg(feature = "failpoints")]
    if fail::eval(name, |_| ()).is_some() {
        // SAFETY: raising a signal has no memory-safety preconditions.
        unsafe {
            libc::raise(libc::SIGKILL);
        }
    }
    let _ = name;
}

/// True when the point `name` is configured `return(N)` with `N == value` (never without
/// the `failpoints` feature).
#[inline(always)]
pub fn forced(name: &'static str, value: u64) -> bool {
    #[cfg(feature = "failpoints")]
    if let Some(Some(arg)) = fail::eval(name, |arg| arg) {
        return arg.trim().parse() == Ok(value);
    }
    let _ = (name, value);
    false
}

/// Reads `FAILPOINTS` from the environment; the returned guard keeps them active.
#[cfg(feature = "failpoints")]
pub fn setup() -> fail::FailScenario<'static> {
    fail::FailScenario::setup()
}
