//! The percentile bootstrap over incidents with a small seeded generator of our own, so the
//! same input and seed give the same interval on every platform and every crate version.

/// splitmix64 (Steele, Lea and Flood 2014): expands one 64-bit seed into the state of the
/// main generator. Written out here because its output stream is part of our results.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// xoshiro256** (Blackman and Vigna 2018): fast, small, and its stream is fixed by its
/// definition, unlike a library generator whose algorithm may change between versions.
#[derive(Debug, Clone)]
pub struct Xoshiro256 {
    s: [u64; 4],
}

impl Xoshiro256 {
    /// Seeds the four words from splitmix64, as the authors recommend (never all zero).
    pub fn seed_from_u64(seed: u64) -> Xoshiro256 {
        let mut sm = SplitMix64::new(seed);
        Xoshiro256 {
            s: [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()],
        }
    }

    /// A generator with the given raw state (for the reference test vectors).
    pub fn from_state(s: [u64; 4]) -> Xoshiro256 {
        Xoshiro256 { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A number in `0..n` by multiply-and-shift (Lemire). Its bias is below n / 2^64, far
    /// under anything a bootstrap can see, and it needs no rejection loop.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Two numbers in `0..n` from one draw, by multiply-and-shift on each 32-bit half. For the
    /// bootstrap (n = incidents, far below 2^32) the bias is below n / 2^32; it halves the
    /// generator's share of the work.
    pub fn two_below(&mut self, n: u32) -> (usize, usize) {
        let x = self.next_u64();
        let hi = ((x >> 32) * u64::from(n)) >> 32;
        let lo = ((x & 0xFFFF_FFFF) * u64::from(n)) >> 32;
        (hi as usize, lo as usize)
    }

    /// A float in [0, 1) from the top 53 bits.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The 95% percentile-bootstrap interval of the mean, for K metrics at once.
///
/// `rows` holds one row per incident (its K metric values). Each of the `resamples` rounds
/// draws n rows with replacement (two indices per generator call, high half first), the same
/// draw for every metric, and records the K means;
/// the interval of each metric is the 2.5th and 97.5th percentile of its recorded means
/// (linear interpolation between order statistics, as numpy's default `percentile`).
/// No rows give [0, 0]; zero resamples give the degenerate interval [mean, mean].
pub fn percentile_ci<const K: usize>(
    rows: &[[f64; K]],
    resamples: usize,
    seed: u64,
) -> [(f64, f64); K] {
    let n = rows.len();
    if n == 0 {
        return [(0.0, 0.0); K];
    }
    if resamples == 0 {
        let m = means(rows);
        return std::array::from_fn(|k| (m[k], m[k]));
    }
    let mut rng = Xoshiro256::seed_from_u64(seed);
    let mut stats: Vec<Vec<f64>> = (0..K).map(|_| Vec::with_capacity(resamples)).collect();
    let n32 = u32::try_from(n).unwrap_or(u32::MAX);
    for _ in 0..resamples {
        // Two running sums (even and odd draws) halve the chain of dependent additions.
        let mut even = [0.0f64; K];
        let mut odd = [0.0f64; K];
        for _ in 0..n / 2 {
            let (i, j) = rng.two_below(n32);
            let (a, b) = (&rows[i], &rows[j]);
            for k in 0..K {
                even[k] += a[k];
                odd[k] += b[k];
            }
        }
        if n % 2 == 1 {
            let row = &rows[rng.two_below(n32).0];
            for k in 0..K {
                even[k] += row[k];
            }
        }
        let sums: [f64; K] = std::array::from_fn(|k| even[k] + odd[k]);
        for k in 0..K {
            stats[k].push(sums[k] / n as f64);
        }
    }
    std::array::from_fn(|k| {
        let v = &mut stats[k];
        (percentile(v, 0.025), percentile(v, 0.975))
    })
}

/// The mean of each column (0 for no rows).
pub fn means<const K: usize>(rows: &[[f64; K]]) -> [f64; K] {
    let mut sums = [0.0f64; K];
    for row in rows {
        for k in 0..K {
            sums[k] += row[k];
        }
    }
    if rows.is_empty() {
        return sums;
    }
    sums.map(|s| s / rows.len() as f64)
}

/// The p-quantile (0 <= p <= 1) of `values` with linear interpolation at position p·(m−1).
/// Reorders `values` (selection, not a full sort).
pub fn percentile(values: &mut [f64], p: f64) -> f64 {
    let m = values.len();
    if m == 0 {
        return 0.0;
    }
    let pos = p.clamp(0.0, 1.0) * (m - 1) as f64;
    let lo = pos.floor() as usize;
    let frac = pos - lo as f64;
    let (_, &mut lo_value, rest) = values.select_nth_unstable_by(lo, f64::total_cmp);
    if frac == 0.0 || rest.is_empty() {
        return lo_value;
    }
    // The next order statistic is the smallest value above position lo.
    let hi_value = rest.iter().copied().fold(f64::INFINITY, f64::min);
    lo_value + frac * (hi_value - lo_value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn splitmix64_matches_the_published_sequence() {
        // The reference sequence for seed 1234567 (Vigna's splitmix64.c, also Java's
        // SplittableRandom): a platform or refactoring that changed the stream would fail here.
        let mut g = SplitMix64::new(1234567);
        assert_eq!(g.next_u64(), 6457827717110365317);
        assert_eq!(g.next_u64(), 3203168211198807973);
        assert_eq!(g.next_u64(), 9817491932198370423);
    }

    #[test]
    fn xoshiro256starstar_matches_the_reference_implementation() {
        // State {1, 2, 3, 4} run through the reference C code of xoshiro256starstar.c.
        let mut g = Xoshiro256::from_state([1, 2, 3, 4]);
        let got: Vec<u64> = (0..4).map(|_| g.next_u64()).collect();
        assert_eq!(got, [11520, 0, 1509978240, 1215971899390074240]);
    }

    #[test]
    fn below_stays_in_range_and_reaches_every_value() {
        let mut g = Xoshiro256::seed_from_u64(7);
        let mut seen = [0usize; 5];
        for _ in 0..10_000 {
            seen[g.below(5)] += 1;
        }
        for (v, c) in seen.iter().enumerate() {
            assert!(*c > 1800 && *c < 2200, "value {v} drawn {c} times of 10000");
        }
    }

    #[test]
    fn two_below_covers_the_range_evenly() {
        let mut g = Xoshiro256::seed_from_u64(11);
        let mut seen = [0usize; 3];
        for _ in 0..15_000 {
            let (a, b) = g.two_below(3);
            seen[a] += 1;
            seen[b] += 1;
        }
        for c in seen {
            assert!(c > 9_500 && c < 10_500, "{seen:?}");
        }
    }

    #[test]
    fn percentile_interpolates_like_numpy() {
        let mut v = vec![4.0, 1.0, 3.0, 2.0];
        // numpy.percentile([1,2,3,4], 25) == 1.75, 50 -> 2.5, 100 -> 4
        assert!((percentile(&mut v, 0.25) - 1.75).abs() < 1e-12);
        assert!((percentile(&mut v, 0.5) - 2.5).abs() < 1e-12);
        assert_eq!(percentile(&mut v, 1.0), 4.0);
        assert_eq!(percentile(&mut v, 0.0), 1.0);
        assert_eq!(percentile(&mut [], 0.5), 0.0);
    }

    #[test]
    fn same_seed_same_interval_other_seed_other_draws() {
        let rows: Vec<[f64; 1]> = (0..30).map(|i| [(i % 7) as f64 / 6.0]).collect();
        let a = percentile_ci(&rows, 2000, 0);
        let b = percentile_ci(&rows, 2000, 0);
        let c = percentile_ci(&rows, 2000, 1);
        assert_eq!(a, b);
        assert_ne!(a, c, "a different seed should draw different resamples");
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(percentile_ci::<2>(&[], 100, 0), [(0.0, 0.0); 2]);
        assert_eq!(percentile_ci(&[[0.25]], 100, 0), [(0.25, 0.25)]);
        assert_eq!(percentile_ci(&[[0.0], [1.0]], 0, 0), [(0.5, 0.5)]);
        let ci = percentile_ci(&[[0.0], [1.0]], 10_000, 3)[0];
        assert_eq!(
            ci,
            (0.0, 1.0),
            "two incidents: the all-0 and all-1 resamples are common"
        );
    }

    #[test]
    fn interval_of_a_spread_sample_is_narrower_than_its_range() {
        let rows: Vec<[f64; 1]> = (0..100).map(|i| [i as f64 / 99.0]).collect();
        let (lo, hi) = percentile_ci(&rows, 10_000, 0)[0];
        // The standard error of the mean here is about 0.029, so the interval is about ±0.057.
        assert!(lo > 0.42 && lo < 0.46, "lo {lo}");
        assert!(hi > 0.54 && hi < 0.58, "hi {hi}");
    }

    proptest! {
        #[test]
        fn the_interval_contains_the_mean(
            values in proptest::collection::vec(0.0f64..=1.0, 1..40),
            seed in any::<u64>(),
        ) {
            let rows: Vec<[f64; 2]> = values.iter().map(|v| [*v, 1.0 - *v]).collect();
            let m = means(&rows);
            let ci = percentile_ci(&rows, 2000, seed);
            for k in 0..2 {
                prop_assert!(ci[k].0 <= ci[k].1);
                prop_assert!(ci[k].0 <= m[k] + 1e-12 && m[k] <= ci[k].1 + 1e-12,
                    "mean {} outside [{}, {}]", m[k], ci[k].0, ci[k].1);
                prop_assert!(ci[k].0 >= -1e-12 && ci[k].1 <= 1.0 + 1e-12);
            }
        }
    }
}
