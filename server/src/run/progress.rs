//! How a run shows its progress: a progress bar (attempts done of all, incidents done,
//! attempts running, elapsed, ETA) when stderr is a terminal, one plain line per finished
//! attempt otherwise (a log file, a Kubernetes pod, GNU parallel's output).

use super::attempt::AttemptSummary;
use super::plan::Pair;
use super::schedule::JobEvent;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::time::Duration;

enum Display {
    Bar(ProgressBar),
    Lines,
}

/// Counts what a run has done and shows it.
pub struct Progress {
    display: Display,
    total: usize,
    finished: usize,
    running: usize,
    /// Attempts still to finish, per incident that has any.
    remaining: HashMap<String, usize>,
    incidents: usize,
    incidents_done: usize,
}

/// One finished attempt as a line: `inc attempt 2: submitted (3 blocks)`.
pub fn attempt_line(r: &Result<AttemptSummary, String>) -> String {
    match r {
        Ok(s) => format!(
            "{} attempt {}: {} ({} blocks){}",
            s.incident,
            s.attempt,
            s.exit.as_str(),
            s.blocks,
            s.error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ),
        Err(e) => e.clone(),
    }
}

impl Progress {
    /// `todo` are the attempts this run will make; `incidents` is how many incidents the run
    /// covers (those whose attempts are all finished already count as done). `bar` picks the
    /// progress bar over plain lines.
    pub fn new(todo: &[Pair], incidents: usize, bar: bool) -> Progress {
        let mut remaining: HashMap<String, usize> = HashMap::new();
        for p in todo {
            *remaining.entry(p.incident.clone()).or_default() += 1;
        }
        let incidents_done = incidents.saturating_sub(remaining.len());
        let display = if bar {
            let pb = ProgressBar::with_draw_target(
                Some(todo.len() as u64),
                ProgressDrawTarget::stderr(),
            );
            if let Ok(style) = ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {pos}/{len} attempts · {msg} · ETA {eta}",
            ) {
                pb.set_style(style.progress_chars("=> "));
            }
            pb.enable_steady_tick(Duration::from_millis(500));
            Display::Bar(pb)
        } else {
            Display::Lines
        };
        let p = Progress {
            display,
            total: todo.len(),
            finished: 0,
            running: 0,
            remaining,
            incidents,
            incidents_done,
        };
        p.refresh();
        p
    }

    fn message(&self) -> String {
        format!(
            "incidents {}/{} done · {} running",
            self.incidents_done, self.incidents, self.running
        )
    }

    fn refresh(&self) {
        if let Display::Bar(pb) = &self.display {
            pb.set_message(self.message());
            pb.set_position(self.finished as u64);
        }
    }

    /// Counts an event of the scheduler and shows it.
    pub fn event(&mut self, e: &JobEvent) {
        match e {
            JobEvent::Started(_) => self.running += 1,
            JobEvent::Finished(job, r) => {
                self.running = self.running.saturating_sub(1);
                self.finished += 1;
                if let Some(n) = self.remaining.get_mut(&job.incident) {
                    *n -= 1;
                    if *n == 0 {
                        self.remaining.remove(&job.incident);
                        self.incidents_done += 1;
                    }
                }
                let line = attempt_line(r);
                match &self.display {
                    Display::Bar(pb) => pb.println(line),
                    Display::Lines => eprintln!("[{}/{}] {line}", self.finished, self.total),
                }
            }
        }
        self.refresh();
    }

    /// A line that does not disturb the bar.
    pub fn println(&self, line: &str) {
        match &self.display {
            Display::Bar(pb) => pb.println(line),
            Display::Lines => eprintln!("{line}"),
        }
    }

    /// Attempts finished so far, and incidents done.
    pub fn counts(&self) -> (usize, usize) {
        (self.finished, self.incidents_done)
    }

    /// Removes the bar (the summary lines that follow say how the run ended).
    pub fn finish(&self) {
        if let Display::Bar(pb) = &self.display {
            pb.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attempt::Exit;
    use crate::run::Job;

    fn job(inc: &str, k: u32) -> Job {
        Job {
            incident: inc.into(),
            workspace: "ws".into(),
            attempt: k,
        }
    }

    fn done(inc: &str, k: u32) -> Result<AttemptSummary, String> {
        Ok(AttemptSummary {
            incident: inc.into(),
            attempt: k,
            dir: "d".into(),
            exit: Exit::Submitted,
            blocks: 2,
            error: None,
        })
    }

    #[test]
    fn incidents_are_done_when_their_last_attempt_finishes() {
        let pair = |i: &str, k| Pair {
            incident: i.into(),
            attempt: k,
        };
        // Three incidents in the run; "c" was finished by an earlier run.
        let todo = [pair("a", 1), pair("a", 2), pair("b", 1)];
        let mut p = Progress::new(&todo, 3, false);
        assert_eq!(p.counts(), (0, 1));
        let (a1, a2, b1) = (job("a", 1), job("a", 2), job("b", 1));
        p.event(&JobEvent::Started(&a1));
        p.event(&JobEvent::Started(&b1));
        assert_eq!(p.running, 2);
        assert_eq!(p.message(), "incidents 1/3 done · 2 running");
        p.event(&JobEvent::Finished(&a1, &done("a", 1)));
        assert_eq!(p.counts(), (1, 1), "a has an attempt left");
        p.event(&JobEvent::Finished(&b1, &done("b", 1)));
        p.event(&JobEvent::Started(&a2));
        p.event(&JobEvent::Finished(&a2, &Err("a attempt 2: broke".into())));
        assert_eq!(p.counts(), (3, 3));
        assert_eq!(p.message(), "incidents 3/3 done · 0 running");
        assert_eq!(
            attempt_line(&done("a", 1)),
            "a attempt 1: submitted (2 blocks)"
        );
    }
}
