//! A progress bar on a terminal, nothing at all in a pipe.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

pub struct Progress {
    enabled: bool,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Shown only when stderr is a terminal and the user did not ask for quiet.
    pub fn new(quiet: bool) -> Progress {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
            bar: None,
        }
    }

    pub fn start(&mut self, len: u64) {
        if !self.enabled {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        let template = if crate::report::colors_enabled() {
            "{spinner:.cyan} [{elapsed_precise}] {bar:30.cyan/blue} {pos}/{len} {wide_msg}"
        } else {
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}"
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        self.bar = Some(bar);
    }

    pub fn message(&self, msg: &str) {
        if let Some(b) = &self.bar {
            b.set_message(msg.to_string());
        }
    }

    pub fn inc(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
