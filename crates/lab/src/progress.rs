//! The lab's progress on stderr: indicatif bars on a terminal; on a pipe
//! or in CI, one timestamped line when a step starts, at each quarter of it
//! and when it ends (what a CI log can show).

use crate::Progress;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Progress bars on a terminal; on a pipe or in CI, one timestamped line
/// when a step starts, at each quarter of it, and when it ends.
pub struct Bars {
    start: Instant,
    multi: Option<MultiProgress>,
    steps: Mutex<Vec<Step>>,
}

/// One step's bar and counts.
struct Step {
    bar: ProgressBar,
    msg: String,
    total: u64,
    pos: u64,
}

impl Default for Bars {
    fn default() -> Self {
        Bars::new()
    }
}

impl Bars {
    /// Bars when stderr is a terminal, plain lines otherwise.
    pub fn new() -> Bars {
        let multi = std::io::stderr()
            .is_terminal()
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        Bars {
            start: Instant::now(),
            multi,
            steps: Mutex::new(Vec::new()),
        }
    }

    fn line(&self, msg: &str) {
        let line = format!("[{:6.1} s] {msg}", self.start.elapsed().as_secs_f64());
        match &self.multi {
            Some(m) => {
                let _ = m.println(line);
            }
            None => eprintln!("{line}"),
        }
    }

    /// Removes the bars of steps that never ended (an error or Ctrl-C).
    pub fn clear(&self) {
        let steps = self.steps.lock().unwrap_or_else(|e| e.into_inner());
        for s in steps.iter() {
            s.bar.finish_and_clear();
        }
    }
}

impl Progress for Bars {
    fn step(&self, msg: &str, total: u64) -> usize {
        let bar = match &self.multi {
            Some(m) => {
                let bar = m.add(if total == 0 {
                    ProgressBar::new_spinner()
                } else {
                    ProgressBar::new(total)
                });
                let template = if total == 0 {
                    "{spinner} {elapsed:>4} {msg}"
                } else {
                    "{spinner} {elapsed:>4} [{bar:24}] {pos}/{len} eta {eta:>4} {msg}"
                };
                if let Ok(style) = ProgressStyle::with_template(template) {
                    bar.set_style(style.progress_chars("=> "));
                }
                bar.set_message(msg.to_string());
                bar.enable_steady_tick(Duration::from_millis(200));
                bar
            }
            None => {
                self.line(msg);
                ProgressBar::hidden()
            }
        };
        let mut steps = self.steps.lock().unwrap_or_else(|e| e.into_inner());
        steps.push(Step {
            bar,
            msg: msg.to_string(),
            total,
            pos: 0,
        });
        steps.len() - 1
    }

    fn inc(&self, id: usize, n: u64) {
        let mut steps = self.steps.lock().unwrap_or_else(|e| e.into_inner());
        let Some(s) = steps.get_mut(id) else { return };
        s.bar.inc(n);
        let before = s.pos * 4 / s.total.max(1);
        s.pos += n;
        let after = s.pos * 4 / s.total.max(1);
        if self.multi.is_none() && s.total > 3 && after > before && s.pos < s.total {
            let line = format!("{}: {}/{}", s.msg, s.pos, s.total);
            drop(steps);
            self.line(&line);
        }
    }

    fn note(&self, id: usize, msg: &str) {
        let steps = self.steps.lock().unwrap_or_else(|e| e.into_inner());
        let Some(s) = steps.get(id) else { return };
        if self.multi.is_some() {
            s.bar.set_message(format!("{}: {msg}", s.msg));
        } else {
            let line = format!("{}: {msg}", s.msg);
            drop(steps);
            self.line(&line);
        }
    }

    fn done(&self, id: usize, msg: &str) {
        let steps = self.steps.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = steps.get(id) {
            s.bar.finish_and_clear();
        }
        drop(steps);
        self.line(msg);
    }
}
