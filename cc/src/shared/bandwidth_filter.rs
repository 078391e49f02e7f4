//! Westwood bandwidth estimation, written once for Westwood+, Vegas-W and
//! VenoDB.
//!
//! All three measure the rate at which the receiver is taking data, from the
//! bytes that ACKs acknowledge and the times the ACKs arrive, and smooth those
//! rate samples with a low-pass filter:
//!
//! * Vegas-W (003_5b3b63821b3b4570.txt, section III.B, eqs. 2-5) takes one
//!   sample per ACK, `b_k = d_k / (t_k - t_{k-1})`, and filters it with the
//!   original Westwood's Tustin (bilinear) discretisation of a first-order
//!   low-pass filter: [`TustinLowPass`].
//! * VenoDB (001_8629d53d83e82638.txt, section 3.1.B) smooths per-ACK samples
//!   with an exponentially weighted moving average to get `bwe(t)`: [`Ewma`].
//! * Westwood+ (Mascolo, Grieco et al.) samples once per RTT — the bytes
//!   acknowledged over a window of at least `max(RTT, 50 ms)` divided by the
//!   window's length — which removes the ACK-compression bias of per-ACK
//!   samples, and smooths the samples with two cascaded EWMA stages of weight
//!   7/8 on the old value: [`BandwidthSampler`] and [`TwoStageLowPass`]. The
//!   weight 7/8 is Linux's, tuned where a window is the 50 ms minimum;
//!   [`TwoStageLowPass::update_over`] keeps that time constant for longer
//!   windows instead of stretching it eightfold per RTT.
//!
//! Bandwidths are bytes per second as `f64`. Every filter ignores samples
//! that are negative or not finite and caps the rest at
//! [`MAX_BANDWIDTH_BYTES_PER_SEC`], so an estimate is always finite and never
//! NaN whatever the stack reports.

use std::time::{Duration, Instant};

/// Westwood+'s shortest sample window: one sample per RTT, but never over a
/// window shorter than 50 ms, because short windows see too few ACKs to give
/// a meaningful rate.
pub const WESTWOOD_PLUS_MIN_SAMPLE_WINDOW: Duration = Duration::from_millis(50);

/// Weight of the previous value in each stage of Westwood+'s filter.
pub const WESTWOOD_PLUS_HISTORY_WEIGHT: f64 = 7.0 / 8.0;

/// Largest rate a filter accepts (8 exabit/s). Far above any real path, and
/// small enough that weighted sums of two such values stay finite.
pub const MAX_BANDWIDTH_BYTES_PER_SEC: f64 = 1e18;

/// Bytes acknowledged over one sample window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BandwidthSample {
    pub bytes: u64,
    /// Time between the ACK that opened the window and the ACK that closed
    /// it; never zero.
    pub interval: Duration,
}

impl BandwidthSample {
    /// The sample's rate.
    pub fn bytes_per_sec(&self) -> f64 {
        rate_bytes_per_sec(self.bytes, self.interval).unwrap_or(0.0)
    }
}

/// `bytes / interval`, or `None` for an empty interval. Capped at
/// [`MAX_BANDWIDTH_BYTES_PER_SEC`].
pub fn rate_bytes_per_sec(bytes: u64, interval: Duration) -> Option<f64> {
    rate_of_secs(bytes, interval.as_secs_f64())
}

/// [`rate_bytes_per_sec`] over `secs` seconds.
fn rate_of_secs(bytes: u64, secs: f64) -> Option<f64> {
    if secs <= 0.0 {
        return None;
    }
    Some((bytes as f64 / secs).min(MAX_BANDWIDTH_BYTES_PER_SEC))
}

/// A sample the filters can take: finite, not negative, capped.
fn usable(sample: f64) -> Option<f64> {
    // Every rate a sampler makes is in range: one comparison pair for it.
    if (0.0..=MAX_BANDWIDTH_BYTES_PER_SEC).contains(&sample) {
        return Some(sample);
    }
    (sample.is_finite() && sample > MAX_BANDWIDTH_BYTES_PER_SEC)
        .then_some(MAX_BANDWIDTH_BYTES_PER_SEC)
}

/// A weight in `0..=1`; anything else (NaN included) becomes `fallback`.
fn weight_or(weight: f64, fallback: f64) -> f64 {
    if (0.0..=1.0).contains(&weight) {
        weight
    } else {
        fallback
    }
}

/// Accumulates acknowledged bytes and closes a sample window once it spans at
/// least `max(rtt, min_window)`.
///
/// A window runs from one ACK to a later one and counts the bytes of the ACKs
/// after its opening ACK up to and including its closing ACK, so that
/// constant-rate ACKs yield exactly that rate. The ACK that closes a window
/// opens the next. The very first ACK only opens a window: the bytes it
/// acknowledges were delivered over an interval the sampler never saw.
///
/// With `min_window` zero and an `rtt` of zero every ACK closes a window,
/// which gives the per-ACK samples of Vegas-W (VenoDB's are the same, from
/// [`PerAckSampler`]); ACKs that arrive at the same instant are merged into
/// one sample instead of dividing by zero.
#[derive(Clone, Debug)]
pub struct BandwidthSampler {
    min_window: Duration,
    window_start: Option<Instant>,
    bytes_in_window: u64,
    /// `start + s` for an `s = max(rtt, min_window)` (`open_for`) seen to
    /// leave the open window open: an ACK before it whose RTT is at least
    /// `s` leaves the window open too, which spares adding an instant and a
    /// duration on nearly every ACK.
    open_until: Option<Instant>,
    open_for: Duration,
}

impl BandwidthSampler {
    pub fn new(min_window: Duration) -> Self {
        BandwidthSampler {
            min_window,
            window_start: None,
            bytes_in_window: 0,
            open_until: None,
            open_for: Duration::ZERO,
        }
    }

    /// Westwood+'s sampler: windows of at least `max(RTT, 50 ms)`.
    pub fn westwood_plus() -> Self {
        Self::new(WESTWOOD_PLUS_MIN_SAMPLE_WINDOW)
    }

    pub fn min_window(&self) -> Duration {
        self.min_window
    }

    /// When the open window started, if one is open.
    pub fn window_start(&self) -> Option<Instant> {
        self.window_start
    }

    /// Bytes acknowledged in the open window so far.
    pub fn bytes_in_window(&self) -> u64 {
        self.bytes_in_window
    }

    /// An ACK acknowledging `acked_bytes` arrived at `now`, when the RTT was
    /// `rtt`. Returns the sample of the window this ACK closes, if any.
    #[inline(always)]
    pub fn on_ack(
        &mut self,
        now: Instant,
        acked_bytes: usize,
        rtt: Duration,
    ) -> Option<BandwidthSample> {
        if let Some(end) = self.open_until {
            // `rtt >= open_for` makes `max(rtt, min_window) >= open_for`, so
            // the window ends at `end` or later.
            if now < end && rtt >= self.open_for {
                self.bytes_in_window = self
                    .bytes_in_window
                    .saturating_add(u64::try_from(acked_bytes).unwrap_or(u64::MAX));
                return None;
            }
        }
        self.on_ack_asking(now, acked_bytes, rtt)
    }

    /// [`Self::on_ack`] when the known end of the open window does not
    /// answer (always, for per-ACK samples): inlined, as the whole of
    /// `on_ack` was before the known end existed.
    #[inline(always)]
    fn on_ack_asking(
        &mut self,
        now: Instant,
        acked_bytes: usize,
        rtt: Duration,
    ) -> Option<BandwidthSample> {
        let Some(start) = self.window_start else {
            self.window_start = Some(now);
            return None;
        };
        self.bytes_in_window = self
            .bytes_in_window
            .saturating_add(u64::try_from(acked_bytes).unwrap_or(u64::MAX));
        // Open while now - start < max(rtt, min_window); an ACK stamped
        // earlier than the start (a clock the stack does not keep monotonic)
        // counts as arriving at it. Asked with instants, which costs less
        // than their difference on every ACK.
        let shortest = rtt.max(self.min_window);
        if now <= start {
            return None;
        }
        if !shortest.is_zero() {
            match start.checked_add(shortest) {
                None => return None,
                Some(end) if now < end => {
                    self.open_until = Some(end);
                    self.open_for = shortest;
                    return None;
                }
                Some(_) => {}
            }
        }
        let interval = now.duration_since(start);
        let sample = BandwidthSample {
            bytes: self.bytes_in_window,
            interval,
        };
        self.window_start = Some(now);
        self.bytes_in_window = 0;
        self.open_until = None;
        Some(sample)
    }

    /// Forgets the open window; the next ACK opens a new one.
    pub fn reset(&mut self) {
        self.window_start = None;
        self.bytes_in_window = 0;
        self.open_until = None;
    }
}

/// [`BandwidthSampler`] with no shortest window, on a clock the caller keeps
/// in integer nanoseconds: the per-ACK samples of Vegas-W
/// (003_5b3b63821b3b4570.txt, eq. 2) and VenoDB. Every ACK that arrives
/// later than the previous sample's closes a window; ACKs at the same instant
/// (or stamped earlier) are merged into the next sample, and the first ACK
/// only opens a window, exactly as [`BandwidthSampler`] with a zero
/// `min_window` and a zero `rtt` does. The caller converts each ACK's instant
/// once and shares it with whatever else needs it, which spares a
/// subtraction of instants per ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerAckSampler {
    window_start_nanos: Option<i64>,
    bytes_in_window: u64,
}

impl PerAckSampler {
    /// An ACK acknowledging `acked_bytes` arrived at `now_nanos` on the
    /// caller's clock. Returns the sample of the window this ACK closes, if
    /// any.
    #[inline]
    pub fn on_ack(&mut self, now_nanos: i64, acked_bytes: usize) -> Option<BandwidthSample> {
        let (bytes, nanos) = self.close_window(now_nanos, acked_bytes)?;
        Some(BandwidthSample {
            bytes,
            interval: Duration::from_nanos(nanos),
        })
    }

    /// [`Self::on_ack`]'s sample as its rate, [`BandwidthSample::bytes_per_sec`],
    /// without making a `Duration` of an interval shorter than a second (the
    /// rate is the same to the bit: see [`secs_of_nanos`]).
    #[inline]
    pub fn on_ack_rate(&mut self, now_nanos: i64, acked_bytes: usize) -> Option<f64> {
        let (bytes, nanos) = self.close_window(now_nanos, acked_bytes)?;
        // The interval is positive, so this is a rate.
        Some(rate_of_secs(bytes, secs_of_nanos(nanos)).unwrap_or(0.0))
    }

    /// Forgets the open window; the next ACK opens a new one.
    pub fn reset(&mut self) {
        self.window_start_nanos = None;
        self.bytes_in_window = 0;
    }

    /// Adds the ACK's bytes to the open window and closes it when the ACK
    /// came later than the window's start: the window's bytes and its
    /// length in nanoseconds (positive). The first ACK only opens a window.
    #[inline(always)]
    fn close_window(&mut self, now_nanos: i64, acked_bytes: usize) -> Option<(u64, u64)> {
        let Some(start) = self.window_start_nanos else {
            self.window_start_nanos = Some(now_nanos);
            return None;
        };
        self.bytes_in_window = self
            .bytes_in_window
            .saturating_add(u64::try_from(acked_bytes).unwrap_or(u64::MAX));
        if now_nanos <= start {
            return None;
        }
        let bytes = self.bytes_in_window;
        self.window_start_nanos = Some(now_nanos);
        self.bytes_in_window = 0;
        Some((bytes, now_nanos.abs_diff(start)))
    }
}

/// A number of nanoseconds in seconds, as the `Duration` of them gives it
/// (`Duration::as_secs_f64`, `secs + nanos / 1e9`). Below a second that is
/// `0.0 + nanos / 1e9`, which is `nanos / 1e9` exactly, with no `Duration`
/// made.
#[inline(always)]
fn secs_of_nanos(nanos: u64) -> f64 {
    match u32::try_from(nanos) {
        Ok(below) if below < 1_000_000_000 => f64::from(below) / 1e9,
        _ => Duration::from_nanos(nanos).as_secs_f64(),
    }
}

/// `interval.as_secs_f64()`, without converting the whole seconds when
/// there are none (`0.0 + nanos / 1e9` is `nanos / 1e9` exactly).
#[inline(always)]
fn secs_of(interval: Duration) -> f64 {
    if interval.as_secs() == 0 {
        f64::from(interval.subsec_nanos()) / 1e9
    } else {
        interval.as_secs_f64()
    }
}

/// One first-order low-pass stage (exponentially weighted moving average):
/// `new = w·old + (1 − w)·sample`, where `w` is the weight of history. The
/// first sample becomes the value as is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ewma {
    history_weight: f64,
    value: Option<f64>,
}

impl Ewma {
    /// `history_weight` outside `0..=1` falls back to Westwood+'s 7/8.
    pub fn new(history_weight: f64) -> Self {
        Ewma {
            history_weight: weight_or(history_weight, WESTWOOD_PLUS_HISTORY_WEIGHT),
            value: None,
        }
    }

    pub fn history_weight(&self) -> f64 {
        self.history_weight
    }

    pub fn value(&self) -> Option<f64> {
        self.value
    }

    /// Feeds one sample and returns the new value; unusable samples leave
    /// the value as it was.
    pub fn update(&mut self, sample: f64) -> Option<f64> {
        self.update_with_weight(sample, self.history_weight)
    }

    /// [`Self::update`] for a sample known to be usable (finite, not
    /// negative, capped: a rate a sampler made), which therefore always
    /// moves the value.
    #[inline(always)]
    pub fn update_usable(&mut self, sample: f64) -> f64 {
        debug_assert_eq!(usable(sample), Some(sample));
        // The stage's own weight is in 0..=1 (`new`).
        let w = self.history_weight;
        let value = match self.value {
            None => sample,
            Some(old) => w * old + (1.0 - w) * sample,
        };
        self.value = Some(value);
        value
    }

    /// Feeds one sample with `history_weight` in place of the stage's own
    /// weight for this one step (a weight outside `0..=1` falls back to the
    /// stage's own).
    pub fn update_with_weight(&mut self, sample: f64, history_weight: f64) -> Option<f64> {
        if let Some(sample) = usable(sample) {
            let w = weight_or(history_weight, self.history_weight);
            self.value = Some(match self.value {
                None => sample,
                Some(old) => w * old + (1.0 - w) * sample,
            });
        }
        self.value
    }

    pub fn reset(&mut self) {
        self.value = None;
    }
}

/// Westwood+'s filter: two cascaded [`Ewma`] stages with the same weight.
/// The second stage is fed the first stage's new value, which makes the
/// response to a step an S-curve rather than an exponential and so damps
/// single outlying samples more. The first sample fills both stages.
///
/// Each stage is a first-order low-pass filter. Fed through
/// [`update`](Self::update), it keeps the weight `w` of its old value per
/// sample, whatever time the sample covers, so its time constant in seconds
/// grows with the sample windows: with Westwood+'s one sample per RTT and
/// `w = 7/8`, about eight RTTs per stage, 4.5 s on a 600 ms path. Fed through
/// [`update_over`](Self::update_over) with a reference window `T` (see
/// [`with_reference_window`](Self::with_reference_window)), a sample that
/// covers a window of length `Δ` keeps `w^(Δ/T)` of the old value: the exact
/// response, over `Δ`, of a continuous first-order low-pass filter with time
/// constant `τ = T / ln(1/w)` to a rate held constant over the window, which
/// is what a sample (bytes over `Δ` divided by `Δ`) is. For `Δ = T` the two
/// agree; with `T` = 50 ms and `w = 7/8`, `τ` ≈ 374 ms whatever the RTT.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoStageLowPass {
    first: Ewma,
    second: Ewma,
    /// `T`: the window over which a stage keeps exactly its weight; zero
    /// means the weight applies per sample.
    reference_window: Duration,
}

impl TwoStageLowPass {
    /// A filter whose stages keep `history_weight` per sample.
    pub fn new(history_weight: f64) -> Self {
        Self::with_reference_window(history_weight, Duration::ZERO)
    }

    /// A filter whose stages keep `history_weight` per `reference_window` of
    /// time covered by the samples fed through
    /// [`update_over`](Self::update_over); a zero `reference_window` makes
    /// that the same as [`update`](Self::update).
    pub fn with_reference_window(history_weight: f64, reference_window: Duration) -> Self {
        TwoStageLowPass {
            first: Ewma::new(history_weight),
            second: Ewma::new(history_weight),
            reference_window,
        }
    }

    pub fn reference_window(&self) -> Duration {
        self.reference_window
    }

    /// The weight each stage keeps of its old value for a sample covering
    /// `interval`: `w^(interval / T)`, or `w` when `T` is zero.
    pub fn history_weight_over(&self, interval: Duration) -> f64 {
        let w = self.history_weight();
        let reference = self.reference_window.as_secs_f64();
        if reference <= 0.0 {
            return w;
        }
        // Both finite and the base in 0..=1: the power is in 0..=1 too.
        w.powf(interval.as_secs_f64() / reference)
    }

    /// Feeds the sample of a window of length `interval` and returns the new
    /// estimate; each stage keeps [`history_weight_over`](Self::history_weight_over)
    /// of its old value.
    pub fn update_over(&mut self, sample: f64, interval: Duration) -> Option<f64> {
        if usable(sample).is_none() {
            return self.estimate();
        }
        let w = self.history_weight_over(interval);
        let first = self.first.update_with_weight(sample, w)?;
        self.second.update_with_weight(first, w)
    }

    /// Westwood+'s weights of 7/8.
    pub fn westwood_plus() -> Self {
        Self::new(WESTWOOD_PLUS_HISTORY_WEIGHT)
    }

    /// The filtered estimate (output of the second stage).
    pub fn estimate(&self) -> Option<f64> {
        self.second.value()
    }

    /// The first stage's value, less smoothed.
    pub fn first_stage(&self) -> Option<f64> {
        self.first.value()
    }

    pub fn history_weight(&self) -> f64 {
        self.first.history_weight()
    }

    /// Feeds one sample and returns the new estimate.
    pub fn update(&mut self, sample: f64) -> Option<f64> {
        if usable(sample).is_none() {
            return self.estimate();
        }
        let first = self.first.update(sample)?;
        self.second.update(first)
    }

    pub fn reset(&mut self) {
        self.first.reset();
        self.second.reset();
    }
}

/// The original Westwood filter used by Vegas-W (003_5b3b63821b3b4570.txt,
/// eqs. 3-5): a first-order low-pass filter with time constant `tau`
/// (cut-off frequency `1/tau`) discretised with the Tustin approximation,
///
/// ```text
/// b̂_k = α_k·b̂_{k−1} + (1 − α_k)·(b_k + b_{k−1}) / 2
/// α_k = (2τ/Δ_k − 1) / (2τ/Δ_k + 1),   Δ_k = t_k − t_{k−1}
/// ```
///
/// Because the samples are irregular, the gain depends on each sample's
/// interval: a sample that closes a short interval moves the estimate little.
/// The paper is silent on the first sample and on intervals longer than `2τ`,
/// where `α_k` turns negative and the estimate would overshoot its inputs.
/// Here the first sample initialises both `b̂_0` and `b_{-1}`, and `α_k` is
/// clamped at 0, so that the estimate always stays between the smallest and
/// largest samples. (The original Westwood paper instead inserts virtual
/// zero samples when no ACK arrived for a while; a caller that wants that
/// can feed `update(0.0, gap)`.)
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TustinLowPass {
    tau: Duration,
    /// 2τ in seconds, which eq. 4 needs on every sample.
    two_tau_secs: f64,
    estimate: Option<f64>,
    previous_sample: f64,
}

impl TustinLowPass {
    pub fn new(tau: Duration) -> Self {
        TustinLowPass {
            tau,
            two_tau_secs: 2.0 * tau.as_secs_f64(),
            estimate: None,
            previous_sample: 0.0,
        }
    }

    pub fn tau(&self) -> Duration {
        self.tau
    }

    pub fn estimate(&self) -> Option<f64> {
        self.estimate
    }

    /// `α` for a sample closing an interval of `interval`, in `0..=1`.
    /// Written as `(2τ − Δ) / (2τ + Δ)`, the same value as eq. 4 but defined
    /// for `Δ = 0` (α = 1: a sample over no time carries no weight).
    pub fn alpha(&self, interval: Duration) -> f64 {
        self.alpha_secs(interval.as_secs_f64())
    }

    /// [`Self::alpha`] for an interval of `delta` seconds.
    fn alpha_secs(&self, delta: f64) -> f64 {
        let two_tau = self.two_tau_secs;
        let denominator = two_tau + delta;
        if denominator <= 0.0 {
            // No time constant and no interval: no filtering.
            return 0.0;
        }
        ((two_tau - delta) / denominator).clamp(0.0, 1.0)
    }

    /// Feeds the sample `b_k` of an interval `Δ_k` and returns `b̂_k`.
    pub fn update(&mut self, sample: f64, interval: Duration) -> Option<f64> {
        self.update_secs(sample, interval.as_secs_f64())
    }

    /// The sample of a [`BandwidthSample`]: `b_k` and its interval taken
    /// from it, the interval converted to seconds once for both.
    pub fn update_with(&mut self, sample: &BandwidthSample) -> Option<f64> {
        let delta = secs_of(sample.interval);
        if delta > 0.0 {
            // A sampler's sample, whose interval is never zero: its rate,
            // as `BandwidthSample::bytes_per_sec` makes it, is usable, and
            // with Δ > 0 eq. 4's denominator is positive and α at most 1,
            // so neither needs the checks of the general path.
            let rate = (sample.bytes as f64 / delta).min(MAX_BANDWIDTH_BYTES_PER_SEC);
            let two_tau = self.two_tau_secs;
            return Some(self.filter(rate, || ((two_tau - delta) / (two_tau + delta)).max(0.0)));
        }
        self.update_secs(sample.bytes_per_sec(), delta)
    }

    /// [`Self::update`] for an interval of `delta` seconds.
    #[inline(never)]
    fn update_secs(&mut self, sample: f64, delta: f64) -> Option<f64> {
        let Some(sample) = usable(sample) else {
            return self.estimate;
        };
        let alpha = self.alpha_secs(delta);
        Some(self.filter(sample, || alpha))
    }

    /// Eq. 3 for a usable sample, with `alpha` giving eq. 4's α (asked
    /// only when there is an estimate to weigh).
    #[inline(always)]
    fn filter(&mut self, sample: f64, alpha: impl FnOnce() -> f64) -> f64 {
        debug_assert_eq!(usable(sample), Some(sample));
        let estimate = match self.estimate {
            None => sample,
            Some(old) => {
                let alpha = alpha();
                // Halves first so that the mean of two huge samples stays finite.
                let mean = sample / 2.0 + self.previous_sample / 2.0;
                alpha * old + (1.0 - alpha) * mean
            }
        };
        self.estimate = Some(estimate);
        self.previous_sample = sample;
        estimate
    }

    pub fn reset(&mut self) {
        self.estimate = None;
        self.previous_sample = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    /// Feeds `count` ACKs of `bytes` every `spacing` starting at `start`,
    /// returning the samples they close.
    fn ack_train(
        sampler: &mut BandwidthSampler,
        start: Instant,
        count: u32,
        spacing: Duration,
        bytes: usize,
        rtt: Duration,
    ) -> Vec<(u32, BandwidthSample)> {
        (0..count)
            .filter_map(|i| {
                sampler
                    .on_ack(start + spacing * i, bytes, rtt)
                    .map(|s| (i, s))
            })
            .collect()
    }

    #[test]
    fn constant_ack_train_gives_its_rate_every_min_window() {
        let t0 = Instant::now();
        let mut sampler = BandwidthSampler::westwood_plus();
        // 1200 bytes every 10 ms is 120 000 B/s; the RTT (20 ms) is below the
        // 50 ms minimum, so a window closes every fifth ACK.
        let samples = ack_train(&mut sampler, t0, 21, ms(10), 1200, ms(20));
        let closing: Vec<u32> = samples.iter().map(|(i, _)| *i).collect();
        assert_eq!(closing, vec![5, 10, 15, 20]);
        for (_, s) in samples {
            assert_eq!(s.bytes, 6000);
            assert_eq!(s.interval, ms(50));
            assert!(close(s.bytes_per_sec(), 120_000.0), "{s:?}");
        }
    }

    #[test]
    fn window_is_at_least_one_rtt() {
        let t0 = Instant::now();
        let mut sampler = BandwidthSampler::westwood_plus();
        let samples = ack_train(&mut sampler, t0, 17, ms(10), 1200, ms(80));
        let closing: Vec<u32> = samples.iter().map(|(i, _)| *i).collect();
        assert_eq!(closing, vec![8, 16]);
        assert_eq!(samples[0].1.interval, ms(80));
    }

    #[test]
    fn a_zero_window_closes_at_every_later_ack_and_an_endless_one_never() {
        let t0 = Instant::now();
        // Vegas-W's sampler: one sample per ACK (eq. 2), none for an ACK at
        // the same instant or stamped before the window's start (the first
        // ACK opens the window; its bytes are not in it).
        let mut per_ack = BandwidthSampler::new(Duration::ZERO);
        assert_eq!(per_ack.on_ack(t0 + ms(10), 1000, Duration::ZERO), None);
        assert_eq!(per_ack.on_ack(t0 + ms(10), 1000, Duration::ZERO), None);
        assert_eq!(per_ack.on_ack(t0 + ms(5), 1000, Duration::ZERO), None);
        let s = per_ack
            .on_ack(t0 + ms(11), 1000, Duration::ZERO)
            .expect("a later ACK closes it");
        assert_eq!((s.bytes, s.interval), (3000, ms(1)));
        // A window no instant can reach stays open.
        let mut endless = BandwidthSampler::new(Duration::MAX);
        assert_eq!(endless.on_ack(t0, 1000, ms(1)), None);
        assert_eq!(endless.on_ack(t0 + ms(1_000_000), 1000, ms(1)), None);
        assert_eq!(endless.bytes_in_window(), 1000);
    }

    #[test]
    fn the_per_ack_sampler_is_the_zero_window_sampler_on_nanoseconds() {
        // ACK times in ms after t0, with repeats and one stamped early.
        let t0 = Instant::now();
        let times = [10, 10, 12, 11, 30, 30, 31, 100, 99, 100, 250];
        let mut instants = BandwidthSampler::new(Duration::ZERO);
        let mut nanos = PerAckSampler::default();
        for (i, t) in times.into_iter().enumerate() {
            let bytes = 1000 + 100 * i;
            let expected = instants.on_ack(t0 + ms(t), bytes, Duration::ZERO);
            let got = nanos.on_ack(t as i64 * 1_000_000, bytes);
            assert_eq!(got, expected, "ACK {i} at {t} ms");
        }
    }

    #[test]
    fn the_per_ack_samplers_are_the_zero_window_sampler() {
        // ACK times in ms after t0 with repeats, one stamped early and gaps
        // of more than a second; then a reset.
        let t0 = Instant::now();
        let times = [
            10, 10, 12, 11, 30, 30, 31, 1_500, 1_499, 3_700, 3_700, 3_701,
        ];
        let mut general = BandwidthSampler::new(Duration::ZERO);
        let mut nanos = PerAckSampler::default();
        let mut rates = PerAckSampler::default();
        for (i, t) in times.into_iter().enumerate() {
            let bytes = 1000 + 100 * i;
            let expected = general.on_ack(t0 + ms(t), bytes, Duration::ZERO);
            let at_nanos = t as i64 * 1_000_000 + 7;
            assert_eq!(nanos.on_ack(at_nanos, bytes), expected, "ACK {i}");
            let rate = rates.on_ack_rate(at_nanos, bytes);
            assert_eq!(
                rate.map(f64::to_bits),
                expected.map(|s| s.bytes_per_sec().to_bits()),
                "ACK {i}"
            );
        }
        general.reset();
        nanos.reset();
        for t in [5, 6] {
            let expected = general.on_ack(t0 + ms(t), 10, Duration::ZERO);
            assert_eq!(
                nanos.on_ack(t as i64 * 1_000_000, 10),
                expected,
                "after reset, {t} ms"
            );
        }
    }

    #[test]
    fn seconds_without_a_duration_are_those_of_the_duration() {
        for nanos in [
            1u64,
            999,
            123_456_789,
            999_999_999,
            1_000_000_000,
            1_000_000_001,
            2_718_281_828,
            86_400_000_000_007,
            u64::MAX,
        ] {
            let d = Duration::from_nanos(nanos);
            assert_eq!(secs_of(d).to_bits(), d.as_secs_f64().to_bits(), "{nanos}");
            assert_eq!(
                secs_of_nanos(nanos).to_bits(),
                d.as_secs_f64().to_bits(),
                "{nanos}"
            );
        }
    }

    #[test]
    fn a_samplers_sample_moves_the_tustin_filter_as_update_does() {
        // Intervals below, at and above 2τ, one of several seconds, one
        // empty (made by hand), and a time constant of zero.
        for tau in [ms(0), ms(40), ms(500)] {
            let mut general = TustinLowPass::new(tau);
            let mut with = TustinLowPass::new(tau);
            for (bytes, interval) in [
                (1350, Duration::from_micros(310)),
                (2700, ms(80)),
                (0, ms(3)),
                (1350, ms(1_000)),
                (u64::MAX, Duration::from_nanos(1)),
                (4050, Duration::from_millis(2_500) + Duration::from_nanos(7)),
                (1350, Duration::ZERO),
                (1350, ms(20)),
            ] {
                let sample = BandwidthSample { bytes, interval };
                let expected = general.update(sample.bytes_per_sec(), interval);
                let got = with.update_with(&sample);
                assert_eq!(
                    got.map(f64::to_bits),
                    expected.map(f64::to_bits),
                    "tau {tau:?}, {bytes} bytes over {interval:?}"
                );
            }
        }
    }

    #[test]
    fn a_usable_sample_moves_the_ewma_as_update_does() {
        let mut general = Ewma::new(0.8);
        let mut known = Ewma::new(0.8);
        for sample in [5e6, 0.0, 1.25e7, MAX_BANDWIDTH_BYTES_PER_SEC, 3.3e3] {
            let expected = general.update(sample);
            assert_eq!(Some(known.update_usable(sample)), expected);
        }
    }

    #[test]
    fn a_smaller_rtt_is_asked_again_within_a_window() {
        // The window of an ACK with a 100 ms RTT would end at 100 ms; a
        // later ACK with a 55 ms RTT closes it at 60 ms, and one with a
        // longer RTT is still inside it.
        let t0 = Instant::now();
        let mut sampler = BandwidthSampler::new(Duration::ZERO);
        sampler.on_ack(t0, 1000, ms(100));
        assert_eq!(sampler.on_ack(t0 + ms(10), 1000, ms(100)), None);
        assert_eq!(sampler.on_ack(t0 + ms(50), 1000, ms(120)), None);
        let s = sampler
            .on_ack(t0 + ms(60), 1000, ms(55))
            .expect("past the shorter window");
        assert_eq!((s.bytes, s.interval), (3000, ms(60)));
        // The next window starts afresh: 100 ms from 60 ms.
        assert_eq!(sampler.on_ack(t0 + ms(150), 1000, ms(100)), None);
        assert!(sampler.on_ack(t0 + ms(160), 1000, ms(100)).is_some());
    }

    #[test]
    fn no_sample_before_the_minimum_window() {
        let t0 = Instant::now();
        let mut sampler = BandwidthSampler::westwood_plus();
        assert_eq!(sampler.on_ack(t0, 1200, ms(1)), None);
        assert_eq!(sampler.on_ack(t0 + ms(49), 1200, ms(1)), None);
        assert_eq!(sampler.bytes_in_window(), 1200);
        let s = sampler
            .on_ack(t0 + ms(50), 1200, ms(1))
            .expect("window closes");
        assert_eq!(s.bytes, 2400);
        assert_eq!(sampler.window_start(), Some(t0 + ms(50)));
    }

    #[test]
    fn simultaneous_acks_merge_instead_of_dividing_by_zero() {
        let t0 = Instant::now();
        let mut sampler = BandwidthSampler::new(Duration::ZERO);
        assert_eq!(sampler.on_ack(t0, 1000, Duration::ZERO), None);
        assert_eq!(sampler.on_ack(t0, 1000, Duration::ZERO), None);
        assert_eq!(sampler.on_ack(t0, 1000, Duration::ZERO), None);
        let s = sampler
            .on_ack(t0 + ms(1), 1000, Duration::ZERO)
            .expect("per-ACK sample");
        assert_eq!(s.bytes, 3000);
        assert!(close(s.bytes_per_sec(), 3_000_000.0));
        // A clock that steps back is treated as no time passing.
        assert_eq!(sampler.on_ack(t0, 1000, Duration::ZERO), None);
    }

    #[test]
    fn huge_byte_counts_saturate() {
        let t0 = Instant::now();
        let mut sampler = BandwidthSampler::new(ms(1));
        sampler.on_ack(t0, 0, Duration::ZERO);
        sampler.on_ack(t0, usize::MAX, Duration::ZERO);
        let s = sampler.on_ack(t0 + Duration::from_nanos(1), usize::MAX, Duration::ZERO);
        assert_eq!(s, None, "1 ns is below the 1 ms window");
        let s = sampler
            .on_ack(t0 + ms(1), usize::MAX, Duration::ZERO)
            .expect("closes");
        assert_eq!(s.bytes, u64::MAX);
        assert_eq!(s.bytes_per_sec(), MAX_BANDWIDTH_BYTES_PER_SEC);
        assert_eq!(rate_bytes_per_sec(10, Duration::ZERO), None);
    }

    #[test]
    fn two_stage_step_response_matches_closed_form() {
        // After a first sample a and then k samples b, stage one is
        // b + (a − b)·w^k and stage two, solving its recurrence,
        // b + (a − b)·w^k·(1 + k·(1 − w)).
        let (a, b, w) = (100_000.0, 300_000.0, 7.0 / 8.0);
        let mut filter = TwoStageLowPass::westwood_plus();
        assert_eq!(filter.update(a), Some(a));
        for k in 1..=40 {
            let got = filter.update(b).expect("estimate");
            let wk = f64::powi(w, k);
            assert!(close(filter.first_stage().unwrap(), b + (a - b) * wk));
            let expected = b + (a - b) * wk * (1.0 + f64::from(k) * (1.0 - w));
            assert!(close(got, expected), "k={k}: {got} vs {expected}");
        }
    }

    #[test]
    fn update_over_the_reference_window_is_the_per_sample_filter() {
        let samples = [1.0e5, 4.0e5, 0.0, 2.5e5, 9.0e5, 3.0e5];
        let mut per_sample = TwoStageLowPass::westwood_plus();
        let mut timed = TwoStageLowPass::with_reference_window(7.0 / 8.0, ms(50));
        let mut untimed = TwoStageLowPass::new(7.0 / 8.0);
        for s in samples {
            let a = per_sample.update(s).unwrap();
            assert!(close(a, timed.update_over(s, ms(50)).unwrap()));
            // No reference window: the interval does not matter.
            assert!(close(a, untimed.update_over(s, ms(600)).unwrap()));
        }
        assert_eq!(untimed.history_weight_over(ms(600)), 7.0 / 8.0);
    }

    #[test]
    fn update_over_keeps_the_continuous_time_constant() {
        // A first-order low-pass filter with time constant τ, fed a step from
        // a to b, is at b + (a − b)·e^(−t/τ) after t. 7/8 per 50 ms is
        // τ = 50 ms / ln(8/7). Samples of 600 ms windows: the first stage
        // must follow that curve, and the second, fed the first's value at
        // each sample, b + (a − b)·v^k·(1 + k·(1 − v)) with v = e^(−600/τ).
        let tau_s = 0.050 / (8.0_f64 / 7.0).ln();
        let (a, b) = (2_000.0, 2_500_000.0);
        let mut f = TwoStageLowPass::with_reference_window(7.0 / 8.0, ms(50));
        let v = (-0.6 / tau_s).exp();
        assert!(close(f.history_weight_over(ms(600)), v));
        f.update_over(a, ms(600));
        for k in 1..=20 {
            let got = f.update_over(b, ms(600)).unwrap();
            let t = 0.6 * f64::from(k);
            assert!(close(
                f.first_stage().unwrap(),
                b + (a - b) * (-t / tau_s).exp()
            ));
            let expected = b + (a - b) * v.powi(k) * (1.0 + f64::from(k) * (1.0 - v));
            assert!(close(got, expected), "k={k}: {got} vs {expected}");
        }
        // Windows of any length keep the first stage on the same curve.
        let mut f = TwoStageLowPass::with_reference_window(7.0 / 8.0, ms(50));
        f.update_over(a, ms(600));
        let mut t = 0.0;
        for window_ms in [50u64, 600, 73, 1_000, 250] {
            f.update_over(b, ms(window_ms));
            t += window_ms as f64 / 1000.0;
            assert!(close(
                f.first_stage().unwrap(),
                b + (a - b) * (-t / tau_s).exp()
            ));
        }
    }

    #[test]
    fn update_over_extreme_windows() {
        let mut f = TwoStageLowPass::with_reference_window(7.0 / 8.0, ms(50));
        assert_eq!(f.update_over(f64::NAN, ms(50)), None);
        assert_eq!(f.update_over(1_000.0, ms(50)), Some(1_000.0));
        // A window of no time carries no weight.
        assert_eq!(f.update_over(9_000.0, Duration::ZERO), Some(1_000.0));
        // A window far longer than τ replaces the estimate.
        assert_eq!(
            f.update_over(9_000.0, Duration::from_secs(3600)),
            Some(9_000.0)
        );
        assert_eq!(f.update_over(-5.0, Duration::MAX), Some(9_000.0));
        let v = f.update_over(f64::MAX, Duration::MAX).unwrap();
        assert_eq!(v, MAX_BANDWIDTH_BYTES_PER_SEC);
        let mut ewma = Ewma::new(0.5);
        ewma.update(10.0);
        // An out-of-range one-off weight falls back to the stage's own.
        assert_eq!(ewma.update_with_weight(20.0, f64::NAN), Some(15.0));
        assert_eq!(ewma.update_with_weight(20.0, 0.0), Some(20.0));
    }

    #[test]
    fn filters_ignore_unusable_samples_and_cap_huge_ones() {
        let mut two = TwoStageLowPass::westwood_plus();
        assert_eq!(two.update(f64::NAN), None);
        assert_eq!(two.update(-1.0), None);
        assert_eq!(two.update(5.0), Some(5.0));
        assert_eq!(two.update(f64::INFINITY), Some(5.0));
        let mut ewma = Ewma::new(0.5);
        ewma.update(f64::MAX);
        ewma.update(f64::MAX);
        assert_eq!(ewma.value(), Some(MAX_BANDWIDTH_BYTES_PER_SEC));
        assert_eq!(Ewma::new(f64::NAN).history_weight(), 7.0 / 8.0);
        assert_eq!(Ewma::new(2.0).history_weight(), 7.0 / 8.0);

        let mut tustin = TustinLowPass::new(ms(100));
        assert_eq!(tustin.update(f64::NAN, ms(10)), None);
        tustin.update(f64::MAX, ms(10));
        let v = tustin.update(f64::MAX, ms(10)).unwrap();
        assert!(v.is_finite() && v <= MAX_BANDWIDTH_BYTES_PER_SEC);
    }

    #[test]
    fn tustin_alpha_follows_eq_4() {
        let f = TustinLowPass::new(Duration::from_secs(1));
        // 2τ/Δ = 4 → α = 3/5.
        assert!(close(f.alpha(ms(500)), 3.0 / 5.0));
        // 2τ/Δ = 20 → α = 19/21.
        assert!(close(f.alpha(ms(100)), 19.0 / 21.0));
        assert_eq!(f.alpha(Duration::ZERO), 1.0);
        assert_eq!(f.alpha(Duration::from_secs(3)), 0.0, "clamped");
        assert_eq!(
            TustinLowPass::new(Duration::ZERO).alpha(Duration::ZERO),
            0.0
        );
    }

    #[test]
    fn tustin_step_response_matches_closed_form() {
        // With a constant interval α is constant. After a first sample a and
        // then samples b, b̂_1 = α·a + (1 − α)(a + b)/2 and from then on
        // b̂_k − b = α(b̂_{k−1} − b), so b̂_k = b + (a − b)·α^{k−1}·(1 + α)/2.
        let (a, b) = (50_000.0, 80_000.0);
        let mut f = TustinLowPass::new(Duration::from_secs(1));
        let alpha = 3.0 / 5.0;
        assert_eq!(f.update(a, ms(500)), Some(a));
        for k in 1..=30 {
            let got = f.update(b, ms(500)).unwrap();
            let expected = b + (a - b) * f64::powi(alpha, k - 1) * (1.0 + alpha) / 2.0;
            assert!(close(got, expected), "k={k}: {got} vs {expected}");
        }
    }

    #[test]
    fn tustin_stays_between_its_samples() {
        let mut f = TustinLowPass::new(ms(10));
        let samples = [1.0e6, 0.0, 5.0e5, 2.0e6, 0.0, 0.0, 7.0e5];
        for (i, s) in samples.iter().enumerate() {
            // Intervals up to 10·τ, where an unclamped α would be negative.
            let v = f.update(*s, ms(10 * i as u64)).unwrap();
            assert!((0.0..=2.0e6).contains(&v), "{v}");
        }
    }
}
