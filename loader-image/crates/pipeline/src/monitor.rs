//! The renderers of one load's progress, started and stopped together: bars on a
//! terminal (crate::progress_bar), JSON lines otherwise (crate::progress_json), and the
//! Prometheus metrics server (crate::metrics). Each reads crate::progress.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use crate::error::LoadError;
use crate::metrics::MetricsServer;
use crate::options::{MonitorOptions, ProgressStyle};
use crate::progress::Progress;
use crate::{progress_bar, progress_json};

/// The renderers of one load: a reporter thread (bars or JSON lines) and the metrics
/// server. [`Monitor::finish`] stops the reporter, which prints the per-phase summary.
pub struct Monitor {
    progress: Arc<Progress>,
    reporter: Option<std::thread::JoinHandle<()>>,
    metrics: Option<MetricsServer>,
}

impl Monitor {
    pub fn start(opts: &MonitorOptions, progress: Arc<Progress>) -> Result<Monitor, LoadError> {
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
