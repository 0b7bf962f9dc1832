//! The renderers of one load's progress, started and stopped together: bars on a
//! terminal (crate::progress_bar), JSON lines otherwise (crate::progress_json), and the
//! Prometheus metrics server (crate::metrics). Each reads crate::progress.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::metrics::{CannotListen, MetricsServer};
use crate::progress::Progress;
use crate::{progress_bar, progress_json};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ProgressStyle {
    /// Bars when stderr is a terminal, JSON lines otherwise.
    #[default]
    Auto,
    Bars,
    Json,
    /// Nothing (library use).
    Off,
}

/// What a load shows while it runs.
#[derive(Clone, Debug)]
pub struct MonitorOptions {
    pub style: ProgressStyle,
    /// Between two JSON progress lines.
    pub interval: Duration,
    /// Serve Prometheus metrics at `http://ADDR/metrics` while the load runs.
    pub metrics_addr: Option<SocketAddr>,
    /// Keep serving them this long after the load ends (until a signal comes), so that a
    /// scrape sees the final figures of a load shorter than a scrape interval.
    pub metrics_linger: Duration,
}

impl Default for MonitorOptions {
    fn default() -> Self {
        MonitorOptions {
            style: ProgressStyle::Auto,
            interval: Duration::from_secs(10),
            metrics_addr: None,
            metrics_linger: Duration::ZERO,
        }
    }
}

/// The renderers of one load: a reporter thread (bars or JSON lines) and the metrics
/// server. [`Monitor::finish`] stops the reporter, which prints the per-phase summary.
pub struct Monitor {
    progress: Arc<Progress>,
    reporter: Option<std::thread::JoinHandle<()>>,
    metrics: Option<MetricsServer>,
}

impl Monitor {
    pub fn start(opts: &MonitorOptions, progress: Arc<Progress>) -> Result<Monitor, CannotListen> {
        let metrics = match opts.metrics_addr {
            Some(addr) => Some(MetricsServer::start(addr, progress.clone())?),
            None => None,
        };
        let style = match opts.style {
            ProgressStyle::Auto if std::io::stderr().is_terminal() => ProgressStyle::Bars,
            ProgressStyle::Auto => ProgressStyle::Json,
            s => s,
        };
        let interval = opts.interval.max(Duration::from_millis(50));
        let reporter = match style {
            ProgressStyle::Off => None,
            ProgressStyle::Bars => {
                let p = progress.clone();
                Some(spawn_reporter(move || progress_bar::run(&p)))
            }
            _ => {
                let p = progress.clone();
                Some(spawn_reporter(move || progress_json::run(&p, interval)))
            }
        };
        Ok(Monitor { progress, reporter, metrics })
    }

    /// Stops the reporter once the load is over (`ok` says how it ended) and hands back the
    /// metrics server, still serving the final figures, for the caller to stop.
    pub fn finish(mut self, ok: bool) -> Option<MetricsServer> {
        self.stop_reporter(ok);
        self.metrics.take()
    }

    fn stop_reporter(&mut self, ok: bool) {
        self.progress.stop(ok);
        if let Some(h) = self.reporter.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        // A panic unwinding through the load: stop the threads all the same.
        if self.reporter.is_some() || self.metrics.is_some() {
            self.stop_reporter(false);
            if let Some(m) = self.metrics.take() {
                m.stop();
            }
        }
    }
}

fn spawn_reporter(f: impl FnOnce() + Send + 'static) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new().name("progress".into()).spawn(f).expect("spawn progress reporter")
}
