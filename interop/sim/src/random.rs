//! Seeded pseudo-random numbers, split into independent named streams.
//!
//! Every random choice of a scenario (loss draws of each link, the ON/OFF
//! periods of each cross-traffic source, quiche's own randomness of each
//! endpoint) comes from a stream derived from the scenario seed and the name
//! of what draws from it. Adding a flow or a link therefore does not shift the
//! numbers any other component sees, and a scenario with a seed repeats
//! exactly.
//!
//! The generator is xoshiro256** seeded through splitmix64, written here
//! rather than taken from a crate so that the numbers can never change under
//! us with a dependency update (which would silently change every result).

/// One stream of pseudo-random numbers.
#[derive(Clone, Debug)]
pub struct RandomStream {
    state: [u64; 4],
}

/// splitmix64: turns any 64-bit value into a well-mixed one. Used to seed
/// xoshiro and to derive stream seeds.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a of the bytes: a stable hash (unlike `std`'s hashers, which may
/// change between Rust releases).
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The seed of the stream called `name` in a scenario run with `seed`.
pub fn stream_seed(seed: u64, name: &str) -> u64 {
    let mut state = seed ^ fnv1a64(name.as_bytes()).rotate_left(17);
    splitmix64(&mut state);
    splitmix64(&mut state)
}

impl RandomStream {
    pub fn from_seed(seed: u64) -> Self {
        let mut s = seed;
        let mut state = [0; 4];
        for word in &mut state {
            *word = splitmix64(&mut s);
        }
        // The all-zero state is the one xoshiro cannot leave; splitmix never
        // yields four zeros in a row, but be explicit about the invariant.
        if state == [0; 4] {
            state[0] = 1;
        }
        RandomStream { state }
    }

    /// The stream called `name` of a scenario run with `seed`.
    pub fn named(seed: u64, name: &str) -> Self {
        Self::from_seed(stream_seed(seed, name))
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1), with 53 bits of precision.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p` (p <= 0: never; p >= 1: always).
    pub fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        if p >= 1.0 {
            return true;
        }
        self.next_f64() < p
    }

    /// Exponentially distributed with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - U is in (0, 1], so the logarithm is finite.
        -mean * (1.0 - self.next_f64()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_repeat_and_differ_by_name_and_seed() {
        let draw = |seed, name| {
            let mut r = RandomStream::named(seed, name);
            (0..4).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(1, "link:a"), draw(1, "link:a"));
        assert_ne!(draw(1, "link:a"), draw(1, "link:b"));
        assert_ne!(draw(1, "link:a"), draw(2, "link:a"));
    }

    #[test]
    fn uniform_and_exponential_means() {
        let mut r = RandomStream::from_seed(7);
        let n = 200_000;
        let mean_u: f64 = (0..n).map(|_| r.next_f64()).sum::<f64>() / n as f64;
        assert!((mean_u - 0.5).abs() < 0.005, "{mean_u}");
        let mean_e: f64 = (0..n).map(|_| r.exponential(10.0)).sum::<f64>() / n as f64;
        assert!((mean_e - 10.0).abs() < 0.1, "{mean_e}");
    }
}
