//! Survival statistics for the tables' cells: pure functions, no I/O.
//!
//! A cell runs a technique with several seeds; a seed either finds the bug
//! after some cost (an *event* at that time) or stops at its budget
//! without it (*censored* at the cost it had spent: it would have needed
//! more). Dropping the censored seeds, or counting them as infinitely
//! slow, biases the median; the Kaplan-Meier estimate of the survival
//! curve S(t) (the probability that a seed has not yet found the bug after
//! cost t) uses them for exactly what is known. From it:
//!
//! * [`median`]: the Kaplan-Meier median and its 95% confidence interval
//!   by Brookmeyer and Crowley (Biometrics 38, 1982): the times whose
//!   curve value is within 1.96 standard errors of 1/2, the standard error
//!   from Greenwood's variance, untransformed (the "plain" interval);
//! * [`log_rank`]: the log-rank (Mantel-Cox) test of two samples, its
//!   chi-square statistic with one degree of freedom and p-value
//!   ([`chi2_sf_1df`], from [`erfc`]).

use serde::Serialize;

/// The 0.975 quantile of the standard normal distribution: a two-sided
/// 95% interval is the estimate plus or minus this many standard errors.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// Curve values this close to 1/2 count as exactly 1/2 (see [`median`]).
const HALF_TOLERANCE: f64 = 1e-9;

/// One seed's outcome: the cost it spent (in any unit: schedules, steps,
/// seconds) and whether it found the bug then (an event) or stopped
/// without it (censored at `time`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Obs {
    /// The cost at the event or at the censoring.
    pub time: f64,
    /// Whether the bug was found at `time`.
    pub event: bool,
}

/// The Kaplan-Meier curve at one time where some seeds found the bug.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// The time.
    pub time: f64,
    /// Seeds still running at `time` (their time is `time` or later; a
    /// seed censored at `time` is still at risk then).
    pub at_risk: u64,
    /// Seeds that found the bug at `time`.
    pub events: u64,
    /// S(time): the product of (1 - events/at_risk) up to and including
    /// this time.
    pub survival: f64,
    /// Greenwood's standard error of `survival`: S(t) times the square
    /// root of the sum of events / (at_risk (at_risk - events)) up to this
    /// time; 0 where S(t) is 0.
    pub se: f64,
}

/// The Kaplan-Meier estimate of the survival curve of `obs`: one step per
/// distinct event time, in increasing order (empty when no seed found the
/// bug). Ties: a seed censored at an event's time counts as at risk then.
pub fn kaplan_meier(obs: &[Obs]) -> Vec<Step> {
    let mut sorted = obs.to_vec();
    sorted.sort_by(|a, b| a.time.total_cmp(&b.time));
    let mut steps = Vec::new();
    let (mut survival, mut greenwood) = (1.0_f64, 0.0_f64);
    let mut i = 0;
    while i < sorted.len() {
        let time = sorted[i].time;
        let at_risk = (sorted.len() - i) as u64;
        let same = sorted[i..].iter().take_while(|o| o.time == time).count();
        let events = sorted[i..i + same].iter().filter(|o| o.event).count() as u64;
        i += same;
        if events == 0 {
            continue;
        }
        survival *= 1.0 - events as f64 / at_risk as f64;
        if at_risk > events {
            greenwood += events as f64 / (at_risk as f64 * (at_risk - events) as f64);
        }
        let se = if survival > 0.0 {
            survival * greenwood.sqrt()
        } else {
            0.0
        };
        steps.push(Step {
            time,
            at_risk,
            events,
            survival,
            se,
        });
    }
    steps
}

/// A median with its confidence interval; `None` where the curve does not
/// reach 1/2 within the follow-up (shown as `>follow_up`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Median {
    /// The Kaplan-Meier median.
    pub median: Option<f64>,
    /// The lower end of its 95% interval.
    pub low: Option<f64>,
    /// The upper end of its 95% interval.
    pub high: Option<f64>,
    /// The longest time observed (event or censoring; 0 without seeds):
    /// an end that is not reached is beyond it.
    pub follow_up: f64,
}

/// The Kaplan-Meier median of `obs` and its 95% Brookmeyer-Crowley
/// interval with Greenwood's variance.
///
/// The median is where S(t) reaches 1/2: the first event time at which
/// S(t) < 1/2, or, where S(t) is exactly 1/2 from an event time until the
/// next, the midpoint of the two (so that without censoring it is the
/// ordinary median, the mean of the middle two of an even number; with no
/// later event, the event time itself). The interval is the set of t with
/// |S(t) - 1/2| <= 1.96 se(t): its ends are where the lower band S - 1.96
/// se and the upper band S + 1.96 se reach 1/2, by the same rule. Any of
/// the three is `None` when its curve stays above 1/2.
pub fn median(obs: &[Obs]) -> Median {
    let steps = kaplan_meier(obs);
    Median {
        median: reaches_half(&steps, |s| s.survival),
        low: reaches_half(&steps, |s| s.survival - Z_95 * s.se),
        high: reaches_half(&steps, |s| s.survival + Z_95 * s.se),
        follow_up: obs.iter().map(|o| o.time).fold(0.0, f64::max),
    }
}

/// Where `curve`, a step function with a value after each of `steps`,
/// reaches 1/2 (see [`median`]).
fn reaches_half(steps: &[Step], curve: impl Fn(&Step) -> f64) -> Option<f64> {
    for (k, s) in steps.iter().enumerate() {
        let v = curve(s);
        if (v - 0.5).abs() < HALF_TOLERANCE {
            return Some(steps.get(k + 1).map_or(s.time, |next| (s.time + next.time) / 2.0));
        }
        if v < 0.5 {
            return Some(s.time);
        }
    }
    None
}

/// The log-rank test of two samples: whether they come from one survival
/// curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LogRank {
    /// Events of the first sample.
    pub observed: f64,
    /// Events the first sample would have had on the pooled curve: the sum
    /// over event times of events x (its seeds at risk) / (all at risk).
    pub expected: f64,
    /// The hypergeometric variance of `observed - expected`.
    pub variance: f64,
    /// (observed - expected)^2 / variance, chi-square with 1 degree of
    /// freedom when the curves are equal.
    pub chi2: f64,
    /// The probability of a statistic at least `chi2` when they are.
    pub p: f64,
}

/// The log-rank test of `a` against `b` (Mantel-Cox, with the
/// hypergeometric variance sum of d (n1/n) (1 - n1/n) (n - d)/(n - 1) over
/// the pooled event times, n at risk of which n1 in `a`, d events).
/// `observed < expected` means `a` finds the bug later than `b`. `None`
/// when the variance is 0 (no event, or no seed at risk in one sample at
/// every event).
pub fn log_rank(a: &[Obs], b: &[Obs]) -> Option<LogRank> {
    let mut times: Vec<f64> = a.iter().chain(b).filter(|o| o.event).map(|o| o.time).collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    let at_risk = |s: &[Obs], t: f64| s.iter().filter(|o| o.time >= t).count() as f64;
    let events = |s: &[Obs], t: f64| s.iter().filter(|o| o.event && o.time == t).count() as f64;
    let (mut observed, mut expected, mut variance) = (0.0, 0.0, 0.0);
    for t in times {
        let (n1, n) = (at_risk(a, t), at_risk(a, t) + at_risk(b, t));
        let d = events(a, t) + events(b, t);
        observed += events(a, t);
        expected += d * n1 / n;
        if n > 1.0 {
            variance += d * (n1 / n) * (1.0 - n1 / n) * (n - d) / (n - 1.0);
        }
    }
    if variance <= 0.0 {
        return None;
    }
    let chi2 = (observed - expected) * (observed - expected) / variance;
    Some(LogRank {
        observed,
        expected,
        variance,
        chi2,
        p: chi2_sf_1df(chi2),
    })
}

/// P(X >= x) for X chi-square with one degree of freedom: X is Z^2 for a
/// standard normal Z, so it is P(|Z| >= sqrt(x)) = erfc(sqrt(x / 2)).
/// Relative error below 1.2e-7, that of [`erfc`]. 1 for x <= 0.
pub fn chi2_sf_1df(x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    erfc((x / 2.0).sqrt())
}

/// The complementary error function, by the Chebyshev-fitted formula of
/// Press, Teukolsky, Vetterling and Flannery (Numerical Recipes in C, 2nd
/// ed., section 6.2, `erfcc`): t = 1/(1 + z/2) and erfc(z) = t exp(-z^2 +
/// P(t)) for z >= 0 with a polynomial P of degree 9, 2 - erfc(-z) below 0.
/// Its relative error is below 1.2e-7 for every z (the tests check it
/// against reference values down to erfc(5) = 1.5e-12), so p-values keep
/// about seven significant digits however small.
pub fn erfc(x: f64) -> f64 {
    const C: [f64; 10] = [
        -1.265_512_23,
        1.000_023_68,
        0.374_091_96,
        0.096_784_18,
        -0.186_288_06,
        0.278_868_07,
        -1.135_203_98,
        1.488_515_87,
        -0.822_152_23,
        0.170_872_77,
    ];
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = C.iter().rev().fold(0.0, |acc, c| acc * t + c);
    let r = t * (-z * z + poly).exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn obs(times: &[(f64, bool)]) -> Vec<Obs> {
        times.iter().map(|&(time, event)| Obs { time, event }).collect()
    }

    /// Freireich et al. (Blood 21, 1963), the 6-MP arm of the leukemia
    /// trial: weeks in remission, `*` censored: 6 6 6 6* 7 9* 10 10* 11* 13
    /// 16 17* 19* 20* 22 23 25* 32* 32* 34* 35*.
    fn six_mp() -> Vec<Obs> {
        let e = [6, 6, 6, 7, 10, 13, 16, 22, 23];
        let c = [6, 9, 10, 11, 17, 19, 20, 25, 32, 32, 34, 35];
        let mut v: Vec<Obs> = e
            .iter()
            .map(|&t| (f64::from(t), true))
            .chain(c.iter().map(|&t| (f64::from(t), false)))
            .map(|(time, event)| Obs { time, event })
            .collect();
        v.reverse();
        v
    }

    /// The placebo arm of the same trial, none censored.
    fn placebo() -> Vec<Obs> {
        [1, 1, 2, 2, 3, 4, 4, 5, 5, 8, 8, 8, 8, 11, 11, 12, 12, 15, 17, 22, 23]
            .iter()
            .map(|&t| Obs {
                time: f64::from(t),
                event: true,
            })
            .collect()
    }

    fn close(got: f64, want: f64, rel: f64) -> bool {
        (got - want).abs() <= rel * want.abs()
    }

    /// By hand, at each event time t (n at risk, d events, the Greenwood
    /// sum G of d/(n(n-d)), se = S sqrt(G), the bands S -+ 1.96 se):
    ///
    /// | t  | n  | d | S                   | G      | se     | S-1.96se | S+1.96se |
    /// |----|----|---|---------------------|--------|--------|----------|----------|
    /// | 6  | 21 | 3 | 18/21 = 0.8571      | 0.0079 | 0.0764 | 0.7075   | 1.0068   |
    /// | 7  | 17 | 1 | x 16/17 = 0.8067    | 0.0116 | 0.0869 | 0.6363   | 0.9771   |
    /// | 10 | 15 | 1 | x 14/15 = 0.7529    | 0.0164 | 0.0963 | 0.5641   | 0.9418   |
    /// | 13 | 12 | 1 | x 11/12 = 0.6902    | 0.0240 | 0.1068 | 0.4808   | 0.8995   |
    /// | 16 | 11 | 1 | x 10/11 = 0.6275    | 0.0330 | 0.1141 | 0.4039   | 0.8510   |
    /// | 22 | 7  | 1 | x 6/7 = 0.5378      | 0.0569 | 0.1282 | 0.2865   | 0.7891   |
    /// | 23 | 6  | 1 | x 5/6 = 0.4482      | 0.0902 | 0.1346 | 0.1844   | 0.7120   |
    ///
    /// S first falls below 1/2 at 23: the median (the published one); the
    /// lower band first at 13: the interval's low end; the upper band never
    /// (no event after 23, the last seed censored at 35): `[13, >35]`.
    /// S(23) = 201600/449820 and its se 0.135 are the textbooks' figures.
    #[test]
    fn freireich_six_mp_median_and_interval() {
        let steps = kaplan_meier(&six_mp());
        let times: Vec<f64> = steps.iter().map(|s| s.time).collect();
        assert_eq!(times, [6.0, 7.0, 10.0, 13.0, 16.0, 22.0, 23.0]);
        let at_risk: Vec<u64> = steps.iter().map(|s| s.at_risk).collect();
        assert_eq!(at_risk, [21, 17, 15, 12, 11, 7, 6]);
        assert_eq!(steps[0].events, 3);
        let last = steps[6];
        assert!(close(last.survival, 201_600.0 / 449_820.0, 1e-12), "{last:?}");
        assert!(close(last.se, 0.134_591, 1e-5), "{last:?}");
        assert!(
            close(steps[3].survival - Z_95 * steps[3].se, 0.480_843, 1e-5),
            "{:?}",
            steps[3]
        );
        let m = median(&six_mp());
        assert_eq!(
            m,
            Median {
                median: Some(23.0),
                low: Some(13.0),
                high: None,
                follow_up: 35.0
            }
        );
    }

    /// 6-MP against placebo, by hand: at the 17 distinct event times of
    /// both arms, the 6-MP arm's expected events d n1/n sum to 19.25
    /// against 9 observed (placebo: 21 observed, 10.75 expected); the
    /// variance sums to 6.257; chi-square (9 - 19.25)^2 / 6.257 = 16.79, p =
    /// erfc(sqrt(16.79/2)) = 4.17e-5: the published "Chisq = 16.8 on 1
    /// degrees of freedom, p = 4e-05".
    #[test]
    fn freireich_log_rank() {
        let t = log_rank(&six_mp(), &placebo()).expect("events");
        assert_eq!(t.observed, 9.0);
        assert!(close(t.expected, 19.2505, 1e-5), "{t:?}");
        assert!(close(t.variance, 6.25696, 1e-5), "{t:?}");
        assert!(close(t.chi2, 16.7929, 1e-5), "{t:?}");
        assert!(close(t.p, 4.1688e-5, 1e-4), "{t:?}");
        // The test is symmetric in its samples.
        let back = log_rank(&placebo(), &six_mp()).expect("events");
        assert_eq!(back.observed, 21.0);
        assert!(close(back.expected, 30.0 - t.expected, 1e-12), "{back:?}");
        assert!(close(back.chi2, t.chi2, 1e-12) && close(back.p, t.p, 1e-12), "{back:?}");
    }

    /// erfc against reference values (to 16 digits, as tabulated by
    /// Abramowitz and Stegun and computed by the C library's `erfc`), and
    /// the chi-square critical values of 1 degree of freedom at 5%, 1% and
    /// 0.1%.
    #[test]
    fn erfc_and_chi_square_match_reference_values() {
        let cases = [
            (0.0, 1.0),
            (0.5, 0.479_500_122_186_953_5),
            (1.0, 0.157_299_207_050_285_13),
            (2.0, 0.004_677_734_981_047_265),
            (3.0, 2.209_049_699_858_543_8e-5),
            (5.0, 1.537_459_794_428_035_1e-12),
        ];
        for (x, want) in cases {
            assert!(close(erfc(x), want, 1.2e-7), "erfc({x}) = {} not {want}", erfc(x));
            assert!(close(erfc(-x), 2.0 - want, 1.2e-7), "erfc({})", -x);
        }
        for (x, p) in [
            (3.841_458_820_694_124, 0.05),
            (6.634_896_601_021_214, 0.01),
            (10.827_566_170_662_733, 0.001),
        ] {
            assert!(close(chi2_sf_1df(x), p, 1.2e-7), "P(chi2 >= {x}) = {}", chi2_sf_1df(x));
        }
        assert_eq!(chi2_sf_1df(0.0), 1.0);
        assert_eq!(chi2_sf_1df(-1.0), 1.0);
    }

    /// Without censoring the Kaplan-Meier median is the ordinary one (the
    /// middle value, or the mean of the middle two), Greenwood's variance
    /// is the binomial S(1 - S)/n, and the interval holds the median.
    #[test]
    fn without_censoring_the_median_is_the_ordinary_one() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(63);
        for _ in 0..500 {
            let n = rng.random_range(1..=25usize);
            let mut v: Vec<f64> = (0..n).map(|_| f64::from(rng.random_range(0..30u32))).collect();
            let o: Vec<Obs> = v.iter().map(|&time| Obs { time, event: true }).collect();
            v.sort_by(f64::total_cmp);
            let ordinary = if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            };
            let m = median(&o);
            assert_eq!(m.median, Some(ordinary), "{v:?}");
            assert_eq!(m.follow_up, v[n - 1]);
            let (low, high) = (m.low.expect("reached"), m.high.expect("reached"));
            assert!(low <= ordinary && ordinary <= high, "{v:?}: {m:?}");
            for s in kaplan_meier(&o) {
                let binomial = (s.survival * (1.0 - s.survival) / n as f64).sqrt();
                assert!((s.se - binomial).abs() < 1e-12, "{v:?}: {s:?}");
            }
        }
    }

    /// Twenty seeds, none censored: the interval runs from the 6th to the
    /// 15th smallest, the order statistics of the classic distribution-free
    /// 95% interval of a median of 20 (binomial: P(6 <= rank <= 15) =
    /// 0.959). By hand: after k events S = 1 - k/20, se = sqrt(S(1 -
    /// S)/20); S - 1.96 se = 0.499 at k = 6 (0.7 - 0.201), above 1/2 at k
    /// = 5; S + 1.96 se = 0.440 at k = 15, 0.501 at k = 14.
    #[test]
    fn twenty_seeds_give_the_sixth_to_the_fifteenth() {
        let o: Vec<Obs> = (1..=20)
            .map(|i| Obs {
                time: f64::from(i * 10),
                event: true,
            })
            .collect();
        let m = median(&o);
        assert_eq!((m.median, m.low, m.high), (Some(105.0), Some(60.0), Some(150.0)));
    }

    /// Seeds that never found the bug: nothing is reached, and the
    /// follow-up is the longest of them; nor is it with fewer than half the
    /// seeds finding it before the others stop.
    #[test]
    fn all_censored_is_not_reached() {
        let m = median(&obs(&[(10.0, false), (40.0, false), (25.0, false)]));
        assert_eq!(
            m,
            Median {
                median: None,
                low: None,
                high: None,
                follow_up: 40.0
            }
        );
        assert!(kaplan_meier(&obs(&[(10.0, false)])).is_empty());
        assert_eq!(median(&[]).follow_up, 0.0);
        assert_eq!(median(&[]).median, None);
        // 2 of 5 found it, the rest stopped later: S stays at 3/5.
        let m = median(&obs(&[
            (1.0, true),
            (2.0, true),
            (9.0, false),
            (9.0, false),
            (9.0, false),
        ]));
        assert_eq!((m.median, m.high, m.follow_up), (None, None, 9.0));
    }

    /// Censoring is not dropping: three seeds found it at 1, 2 and 3 and
    /// two stopped early, at 1 (still at risk at the event at 1) and 2.
    /// By hand: S(1) = 4/5, S(2) = 4/5 x 2/3 = 8/15, S(3) = 8/15 x 0 = 0,
    /// so the median is 3; dropping the censored seeds would give 2.
    #[test]
    fn censored_seeds_count_until_they_stop() {
        let o = obs(&[(1.0, true), (1.0, false), (2.0, true), (2.0, false), (3.0, true)]);
        let s = kaplan_meier(&o);
        let got: Vec<(u64, f64)> = s.iter().map(|s| (s.at_risk, s.survival)).collect();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], (5, 0.8));
        assert_eq!(got[1].0, 3);
        assert!((got[1].1 - 8.0 / 15.0).abs() < 1e-12);
        assert_eq!(got[2], (1, 0.0));
        assert_eq!(median(&o).median, Some(3.0));
    }

    /// One seed: its time is the median and both ends.
    #[test]
    fn one_seed_is_its_own_median() {
        let m = median(&obs(&[(42.0, true)]));
        assert_eq!((m.median, m.low, m.high), (Some(42.0), Some(42.0), Some(42.0)));
        let m = median(&obs(&[(42.0, false)]));
        assert_eq!((m.median, m.follow_up), (None, 42.0));
    }

    /// Equal samples give chi-square 0 and p = 1; no event, no test.
    #[test]
    fn log_rank_of_equal_samples_is_zero() {
        let a = obs(&[(1.0, true), (5.0, true), (7.0, false)]);
        let t = log_rank(&a, &a).expect("events");
        assert!(t.chi2.abs() < 1e-12 && (t.p - 1.0).abs() < 1e-12, "{t:?}");
        assert_eq!(log_rank(&obs(&[(1.0, false)]), &obs(&[(2.0, false)])), None);
    }
}
