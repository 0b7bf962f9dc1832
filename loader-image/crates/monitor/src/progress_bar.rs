//! Progress bars on a terminal (indicatif): one bar per phase — parse by compressed bytes
//! read, nodes by terms written, indexes one bar per index by records — each with its
//! rate and ETA, then a table of the phases' times.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::progress::{failed, index_names, Event, Phase, Progress};

/// How often the bars take the numbers from [`Progress`] (indicatif limits redraws itself).
const TICK: Duration = Duration::from_millis(100);

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("progress template")
        .with_key("rate", |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{}/s", indicatif::HumanCount(s.per_sec() as u64));
        })
        .progress_chars("=> ")
}

/// The bars of the phase being shown.
enum Bars {
    None,
    One(ProgressBar),
    /// Index name's position in [`index_names`], and its bar.
    Indexes(Vec<(usize, ProgressBar)>),
}

pub(crate) fn run(p: &Progress) {
    let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
    let mut bars = Bars::None;
    let mut building = false;
    loop {
        let stopping = p.stopping();
        for e in p.take_events() {
            match e {
                Event::Started(phase) => {
                    building |= phase == Phase::Parse;
                    bars = start(&multi, p, phase);
                }
                Event::Note { text, .. } => {
                    let _ = multi.println(text);
                }
                Event::Ended(phase, seconds) => {
                    update(&bars, p);
                    finish(&bars, &format!("{} done in {}", phase.name(), human_seconds(seconds)));
                    bars = Bars::None;
                }
            }
        }
        if stopping {
            break;
        }
        update(&bars, p);
        p.wait(TICK);
    }
    if failed(p) {
        for b in all(&bars) {
            b.abandon_with_message("failed");
        }
    }
    let _ = multi.clear();
    if building {
        let _ = writeln!(std::io::stderr(), "{}", summary_table(p));
    }
}

fn all(bars: &Bars) -> Vec<&ProgressBar> {
    match bars {
        Bars::None => vec![],
        Bars::One(b) => vec![b],
        Bars::Indexes(v) => v.iter().map(|(_, b)| b).collect(),
    }
}

fn start(multi: &MultiProgress, p: &Progress, phase: Phase) -> Bars {
    let s = p.snapshot();
    match phase {
        Phase::Parse => {
            let b = multi.add(ProgressBar::new(s.bytes_total));
            b.set_style(style(
                "{prefix:>8} [{elapsed_precise}] [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta} {msg}",
            ));
            b.set_prefix("parse");
            Bars::One(b)
        }
        Phase::Nodes => {
            let b = multi.add(ProgressBar::new(s.terms_total.max(1)));
            b.set_style(style(
                "{prefix:>8} [{elapsed_precise}] [{bar:30}] {human_pos}/{human_len} terms {rate} ETA {eta} {msg}",
            ));
            b.set_prefix("nodes");
            Bars::One(b)
        }
        Phase::Indexes => {
            let mut v = Vec::new();
            let any = s.index_expected.iter().any(|&e| e > 0);
            for (i, name) in index_names().enumerate() {
                let expected = s.index_expected[i];
                if expected == 0 && (any || i > 0) {
                    continue; // no triples (or quads): those indexes are written empty at once
                }
                let b = multi.add(ProgressBar::new(expected.max(1)));
                b.set_style(style(
                    "{prefix:>8} [{elapsed_precise}] [{bar:30}] {human_pos}/{human_len} records {rate} ETA {eta} {msg}",
                ));
                b.set_prefix(name.to_string());
                v.push((i, b));
            }
            Bars::Indexes(v)
        }
        Phase::Finish => {
            let b = multi.add(ProgressBar::new_spinner());
            b.set_style(
                ProgressStyle::with_template("{prefix:>8} [{elapsed_precise}] {spinner} {msg}").expect("template"),
            );
            b.set_prefix("finish");
            b.set_message("statistics, fsync, report, rename");
            b.enable_steady_tick(TICK);
            Bars::One(b)
        }
        Phase::Plan | Phase::Done => Bars::None,
    }
}

fn update(bars: &Bars, p: &Progress) {
    let s = p.snapshot();
    match (bars, s.phase) {
        (Bars::One(b), Phase::Parse) => {
            b.set_position(s.bytes_read.min(s.bytes_total));
            let mut rejects = if s.rejects > 0 { format!(", {} rejected", s.rejects) } else { String::new() };
            if s.warnings > 0 {
                rejects.push_str(&format!(", {} warnings", s.warnings));
            }
            let expected = s.statements_expected().map_or(String::new(), |n| format!(" (~{n} expected)"));
            b.set_message(format!("{} statements{expected}{rejects}", s.statements));
        }
        (Bars::One(b), Phase::Nodes) => {
            b.set_length(s.terms_total.max(1));
            b.set_position(s.terms_written.min(s.terms_total));
        }
        (Bars::Indexes(v), Phase::Indexes) => {
            for (i, b) in v {
                b.set_length(s.index_expected[*i].max(1));
                b.set_position(p.index_records[*i].0.load(Ordering::Relaxed).min(s.index_expected[*i]));
            }
        }
        _ => {}
    }
}

fn finish(bars: &Bars, msg: &str) {
    match bars {
        Bars::None => {}
        Bars::One(b) => {
            if let Some(len) = b.length() {
                b.set_position(len); // a phase that ended is complete, whatever was sampled last
            }
            b.finish_with_message(msg.to_string());
        }
        Bars::Indexes(v) => {
            for (_, b) in v {
                if let Some(len) = b.length() {
                    b.set_position(len);
                }
                b.finish_with_message(msg.to_string());
            }
        }
    }
}

fn human_seconds(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.1}s")
    } else if s < 3600.0 {
        format!("{}m{:02}s", (s / 60.0) as u64, (s % 60.0) as u64)
    } else {
        format!("{}h{:02}m", (s / 3600.0) as u64, ((s % 3600.0) / 60.0) as u64)
    }
}

/// The per-phase table printed at the end.
pub(crate) fn summary_table(p: &Progress) -> String {
    let phases = p.phase_seconds();
    let total: f64 = p.elapsed().as_secs_f64();
    let mut out = String::from("phase       time    share\n");
    for (ph, s) in &phases {
        let share = if total > 0.0 { 100.0 * s / total } else { 0.0 };
        out.push_str(&format!("{:<8} {:>8} {:>7.1}%\n", ph.name(), human_seconds(*s), share));
    }
    let result = if failed(p) { "failed" } else { "total" };
    out.push_str(&format!("{:<8} {:>8}", result, human_seconds(total)));
    let s = p.snapshot();
    if s.statements > 0 {
        out.push_str(&format!(
            "   {} statements, {:.0} statements/s while parsing",
            s.statements, s.statements_per_second
        ));
    }
    out
}
