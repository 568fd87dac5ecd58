//! Progress bars for conversions at a terminal: one bar per file being
//! converted and one for all of them, with bytes/s and ETA.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::convert::reader::Progress;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bars of one conversion (of one or several files).
pub struct ConvertProgress {
    multi: MultiProgress,
    total: ProgressBar,
    /// Labels of the files, by their index in the batch (missing ones are
    /// labelled by number).
    names: Vec<String>,
    /// The bar of each file being converted and the bytes it had done.
    files: Mutex<HashMap<usize, (ProgressBar, u64)>>,
    /// Whether the total's length grows with each file's size as it starts
    /// (sizes not known in advance).
    total_grows: bool,
}

const FILE_TEMPLATE: &str =
    "{prefix:>24!} [{bar:30}] {bytes:>10}/{total_bytes:<10} {binary_bytes_per_sec:>12} ETA {eta}";
const TOTAL_TEMPLATE: &str = "{prefix:>24!} [{bar:30}] {bytes:>10}/{total_bytes:<10} {binary_bytes_per_sec:>12} ETA {eta} {msg}";

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("the templates are valid")
        .progress_chars("=> ")
}

impl ConvertProgress {
    /// Bars on standard error for files labelled `names`, of `total_bytes`
    /// in all when known in advance.
    pub fn new(names: Vec<String>, total_bytes: Option<u64>) -> Arc<Self> {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(8));
        let total = multi.add(ProgressBar::new(total_bytes.unwrap_or(0)));
        total.set_style(style(TOTAL_TEMPLATE));
        total.set_prefix("total");
        Arc::new(Self {
            multi,
            total,
            names,
            files: Mutex::new(HashMap::new()),
            total_grows: total_bytes.is_none(),
        })
    }

    /// Moves the bars to `at`.
    pub fn update(&self, at: Progress) {
        let mut files = self.files.lock().expect("no panic holds the lock");
        let (bar, done) = files.entry(at.file).or_insert_with(|| {
            let bar = self
                .multi
                .insert_before(&self.total, ProgressBar::new(at.bytes_total));
            bar.set_style(style(FILE_TEMPLATE));
            let label = self
                .names
                .get(at.file)
                .cloned()
                .unwrap_or_else(|| format!("file {}", at.file + 1));
            bar.set_prefix(label);
            if self.total_grows {
                self.total.inc_length(at.bytes_total);
            }
            (bar, 0)
        });
        bar.set_position(at.bytes_done);
        self.total.inc(at.bytes_done.saturating_sub(*done));
        *done = at.bytes_done;
        if at.bytes_done >= at.bytes_total {
            bar.finish_and_clear();
            self.multi.remove(bar);
        }
    }

    /// The callback converters report to.
    pub fn callback(self: &Arc<Self>) -> Arc<dyn Fn(Progress) + Send + Sync> {
        let this = Arc::clone(self);
        Arc::new(move |at| this.update(at))
    }

    /// Removes the bars from the terminal.
    pub fn clear(&self) {
        for (bar, _) in self.files.lock().expect("no panic holds the lock").values() {
            bar.finish_and_clear();
        }
        self.total.finish_and_clear();
        let _ = self.multi.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_adds_each_files_progress_once() {
        let bars = ConvertProgress::new(vec!["a".into(), "b".into()], Some(300));
        bars.multi.set_draw_target(ProgressDrawTarget::hidden());
        let at = |file, bytes_done, bytes_total| Progress {
            file,
            bytes_done,
            bytes_total,
        };
        bars.update(at(0, 50, 100));
        bars.update(at(1, 120, 200));
        bars.update(at(0, 100, 100));
        assert_eq!(bars.total.position(), 220);
        assert_eq!(bars.total.length(), Some(300));
        assert_eq!(bars.files.lock().unwrap()[&1].0.position(), 120);
        assert!(bars.files.lock().unwrap()[&0].0.is_finished());
    }

    #[test]
    fn an_unknown_total_grows_as_files_start() {
        let bars = ConvertProgress::new(Vec::new(), None);
        bars.multi.set_draw_target(ProgressDrawTarget::hidden());
        bars.update(Progress {
            file: 3,
            bytes_done: 10,
            bytes_total: 40,
        });
        assert_eq!(bars.total.length(), Some(40));
        assert_eq!(bars.files.lock().unwrap()[&3].0.prefix(), "file 4");
    }
}
