//! Sets of (file, line) pairs held as merged intervals per file, for agreement and
//! comparison: sizes, intersections, differences. Lines are clipped to the file's length
//! where it is known, as the scoring rules clip them (the scoring rules, docs/scoring.md).

use crate::util::paths::normalize_rel;
use std::collections::BTreeMap;

/// Merged, sorted, disjoint inclusive line intervals per normalised path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineRanges {
    by_path: BTreeMap<String, Vec<(u32, u32)>>,
}

/// Lines `start..=end` of `path`, clipped to `file_lines(path)` when known; `None` when
/// nothing is left.
pub fn clip(
    path: &str,
    start: u32,
    end: u32,
    file_lines: &dyn Fn(&str) -> Option<u32>,
) -> Option<(u32, u32)> {
    let start = start.max(1);
    let end = match file_lines(&normalize_rel(path)) {
        Some(n) => end.min(n),
        None => end,
    };
    (start <= end).then_some((start, end))
}

impl LineRanges {
    /// Adds lines `start..=end` of `path` (already clipped).
    pub fn add(&mut self, path: &str, start: u32, end: u32) {
        let v = self.by_path.entry(normalize_rel(path)).or_default();
        v.push((start, end));
        v.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(v.len());
        for &(s, e) in v.iter() {
            match merged.last_mut() {
                Some(last) if s <= last.1.saturating_add(1) => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        *v = merged;
    }

    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.by_path.keys().map(String::as_str)
    }

    pub fn ranges(&self, path: &str) -> &[(u32, u32)] {
        self.by_path.get(path).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The number of lines.
    pub fn len(&self) -> u64 {
        self.by_path
            .values()
            .flatten()
            .map(|(s, e)| u64::from(e - s) + 1)
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.by_path.is_empty()
    }

    /// The number of lines of `path`.
    pub fn len_in(&self, path: &str) -> u64 {
        self.ranges(path)
            .iter()
            .map(|(s, e)| u64::from(e - s) + 1)
            .sum()
    }

    /// Whether the set holds a line of `start..=end` in `path`.
    pub fn touches(&self, path: &str, start: u32, end: u32) -> bool {
        let r = self.ranges(&normalize_rel(path));
        let i = r.partition_point(|x| x.1 < start);
        r.get(i).is_some_and(|x| x.0 <= end)
    }

    pub fn intersection(&self, other: &LineRanges) -> LineRanges {
        let mut out = LineRanges::default();
        for (path, a) in &self.by_path {
            let b = other.ranges(path);
            let (mut i, mut j) = (0, 0);
            while i < a.len() && j < b.len() {
                let lo = a[i].0.max(b[j].0);
                let hi = a[i].1.min(b[j].1);
                if lo <= hi {
                    out.add(path, lo, hi);
                }
                if a[i].1 < b[j].1 {
                    i += 1;
                } else {
                    j += 1;
                }
            }
        }
        out
    }

    /// The lines of `self` that `other` does not hold.
    pub fn difference(&self, other: &LineRanges) -> LineRanges {
        let mut out = LineRanges::default();
        for (path, a) in &self.by_path {
            let b = other.ranges(path);
            for &(s, e) in a {
                let mut from = s;
                for &(bs, be) in b.iter().filter(|x| x.1 >= s && x.0 <= e) {
                    if bs > from {
                        out.add(path, from, bs - 1);
                    }
                    from = from.max(be.saturating_add(1));
                }
                if from <= e && from > 0 {
                    out.add(path, from, e);
                }
            }
        }
        out
    }

    /// Every range: (path, start, end), by path and line.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u32, u32)> {
        self.by_path
            .iter()
            .flat_map(|(p, v)| v.iter().map(move |(s, e)| (p.as_str(), *s, *e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_intersects_and_subtracts() {
        let mut a = LineRanges::default();
        a.add("./x.py", 1, 5);
        a.add("x.py", 6, 6); // touching: merged
        a.add("x.py", 11, 12);
        let mut b = LineRanges::default();
        b.add("x.py", 3, 8);
        b.add("y.py", 2, 3);
        assert_eq!(a.ranges("x.py"), &[(1, 6), (11, 12)]);
        assert_eq!((a.len(), b.len()), (8, 8));
        assert_eq!(
            a.intersection(&b).iter().collect::<Vec<_>>(),
            [("x.py", 3, 6)]
        );
        assert_eq!(
            a.difference(&b).iter().collect::<Vec<_>>(),
            [("x.py", 1, 2), ("x.py", 11, 12)]
        );
        assert_eq!(
            b.difference(&a).iter().collect::<Vec<_>>(),
            [("x.py", 7, 8), ("y.py", 2, 3)]
        );
        assert!(a.touches("x.py", 12, 40) && !a.touches("x.py", 7, 10));
        assert_eq!(clip("x.py", 15, 40, &|_| Some(20)), Some((15, 20)));
        assert_eq!(clip("x.py", 25, 40, &|_| Some(20)), None);
        assert_eq!(clip("x.py", 25, 40, &|_| None), Some((25, 40)));
    }
}
