//! Address validation tokens for QUIC Retry (RFC 9000 section 8.1.2).
//!
//! The server answers a client's first Initial with a Retry packet carrying
//! a token, and creates connection state only for an Initial that returns a
//! valid token: proof that the client receives at the address it claims.
//! An Initial flood from spoofed or one-shot addresses then costs one small
//! Retry packet each and no memory.
//!
//! A token is `version (1) | issued, unix seconds (8) | odcid length (1) |
//! odcid | HMAC-SHA256 (32)`, the MAC keyed by a secret drawn at start and
//! covering the issue time, the client's address and port, the original
//! destination connection ID and the connection ID the Retry told the
//! client to use. It is valid for [`TOKEN_LIFETIME_SECS`].
//!
//! A NEW_TOKEN token (RFC 9000 section 8.1.3), handed to every client once
//! its handshake is done so that its next connection skips Retry even
//! while the server sends Retry, is `version (1, another value) | issued,
//! unix seconds (8) | random (8) | HMAC-SHA256 (32)`, the MAC covering the
//! issue time, the random bytes (so that no two tokens are alike) and the
//! client's prefix (an IPv4 address or an IPv6 /64, as the
//! server's other per-client keys: the port and even the host in a /64
//! change between connections). It holds nothing that links it to the
//! connection it came from, and is valid for as long as the server says
//! (`--new-token-lifetime`). The version byte tells the two kinds apart,
//! so a NEW_TOKEN token is never taken for a Retry token or the reverse.

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// How long a Retry token is accepted after it was issued.
pub const TOKEN_LIFETIME_SECS: u64 = 10;
const TOKEN_VERSION: u8 = 1;
const NEW_TOKEN_VERSION: u8 = 2;
const NEW_TOKEN_BODY_LEN: usize = 1 + 8 + 8;
const NEW_TOKEN_LEN: usize = NEW_TOKEN_BODY_LEN + MAC_LEN;
/// Default lifetime of a NEW_TOKEN token (`--new-token-lifetime`): a day,
/// so that a client coming back the same day skips Retry.
pub const DEFAULT_NEW_TOKEN_LIFETIME_SECS: u64 = 86_400;
const MAC_LEN: usize = 32;
/// Longest connection ID (RFC 9000 section 17.2).
const MAX_CID_LEN: usize = 20;

/// Mints and checks tokens with a secret of its own.
pub struct TokenKey {
    key: [u8; 32],
}

impl TokenKey {
    /// A key from the system's randomness.
    pub fn random() -> anyhow::Result<TokenKey> {
        let mut key = [0; 32];
        getrandom::fill(&mut key).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
        Ok(TokenKey { key })
    }

    /// A fixed key (tests and fuzzing).
    pub fn from_bytes(key: [u8; 32]) -> TokenKey {
        TokenKey { key }
    }

    /// The token for a client at `peer` whose first Initial went to `odcid`,
    /// told by the Retry to use `retry_cid` from now on.
    pub fn mint(&self, peer: SocketAddr, odcid: &[u8], retry_cid: &[u8], now_secs: u64) -> Vec<u8> {
        let odcid = &odcid[..odcid.len().min(MAX_CID_LEN)];
        let mut token = Vec::with_capacity(10 + odcid.len() + MAC_LEN);
        token.push(TOKEN_VERSION);
        token.extend_from_slice(&now_secs.to_be_bytes());
        token.push(odcid.len() as u8);
        token.extend_from_slice(odcid);
        let mac = self.mac(&token, peer, retry_cid);
        token.extend_from_slice(&mac);
        token
    }

    /// The original destination connection ID if `token` is one we minted
    /// for `peer` and `dcid` (the connection ID the Initial carrying it is
    /// addressed to) no more than [`TOKEN_LIFETIME_SECS`] ago; `None` for
    /// anything else, however malformed.
    pub fn validate(
        &self,
        token: &[u8],
        peer: SocketAddr,
        dcid: &[u8],
        now_secs: u64,
    ) -> Option<Vec<u8>> {
        let (&version, rest) = token.split_first()?;
        if version != TOKEN_VERSION || rest.len() < 9 {
            return None;
        }
        let issued = u64::from_be_bytes(rest[..8].try_into().ok()?);
        let odcid_len = usize::from(rest[8]);
        if odcid_len > MAX_CID_LEN {
            return None;
        }
        let body_len = 10 + odcid_len;
        if token.len() != body_len + MAC_LEN {
            return None;
        }
        let (body, mac) = token.split_at(body_len);
        let expected = self.mac(body, peer, dcid);
        if !constant_time_eq(mac, &expected) {
            return None;
        }
        // Not from the future (one second of slack), not expired.
        if issued > now_secs.saturating_add(1)
            || now_secs.saturating_sub(issued) > TOKEN_LIFETIME_SECS
        {
            return None;
        }
        Some(body[10..].to_vec())
    }

    /// A NEW_TOKEN token for a client at `peer` (only its prefix counts).
    pub fn mint_new_token(&self, peer: IpAddr, now_secs: u64) -> Vec<u8> {
        let mut token = Vec::with_capacity(NEW_TOKEN_LEN);
        token.push(NEW_TOKEN_VERSION);
        token.extend_from_slice(&now_secs.to_be_bytes());
        // Without randomness two tokens of one second would be alike; a
        // failure leaves zeros, which costs only that.
        let mut nonce = [0u8; 8];
        getrandom::fill(&mut nonce).ok();
        token.extend_from_slice(&nonce);
        let mac = hmac_sha256(&self.key, &[&token, &prefix_bytes(peer)]);
        token.extend_from_slice(&mac);
        token
    }

    /// Whether `token` is a NEW_TOKEN token we minted for `peer`'s prefix
    /// no more than `lifetime_secs` ago; `false` for anything else (a Retry
    /// token, another server's, garbage).
    pub fn validate_new_token(
        &self,
        token: &[u8],
        peer: IpAddr,
        now_secs: u64,
        lifetime_secs: u64,
    ) -> bool {
        if token.len() != NEW_TOKEN_LEN || token[0] != NEW_TOKEN_VERSION {
            return false;
        }
        let (body, mac) = token.split_at(NEW_TOKEN_BODY_LEN);
        let expected = hmac_sha256(&self.key, &[body, &prefix_bytes(peer)]);
        if !constant_time_eq(mac, &expected) {
            return false;
        }
        let Ok(issued) = <[u8; 8]>::try_from(&body[1..9]) else {
            return false;
        };
        let issued = u64::from_be_bytes(issued);
        issued <= now_secs.saturating_add(1) && now_secs.saturating_sub(issued) <= lifetime_secs
    }

    fn mac(&self, body: &[u8], peer: SocketAddr, cid: &[u8]) -> [u8; MAC_LEN] {
        let ip = match peer.ip() {
            IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
            IpAddr::V6(a) => a.octets(),
        };
        let cid_len = [cid.len().min(255) as u8];
        hmac_sha256(
            &self.key,
            &[body, &ip, &peer.port().to_be_bytes(), &cid_len, cid],
        )
    }
}

/// Whether `token` has the form of a Retry token (it may still be forged
/// or expired): an Initial carrying one comes from a client that was sent
/// a Retry, and is answered only if the token validates.
pub fn is_retry_token(token: &[u8]) -> bool {
    token.first() == Some(&TOKEN_VERSION)
}

/// The client's prefix as the NEW_TOKEN MAC covers it: an IPv4 address
/// (IPv4-mapped), or an IPv6 address's first 64 bits.
fn prefix_bytes(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
        IpAddr::V6(a) => (u128::from(a) & !((1u128 << 64) - 1)).to_be_bytes(),
    }
}

/// Seconds since the Unix epoch, for [`TokenKey::mint`] and
/// [`TokenKey::validate`].
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// HMAC (RFC 2104) with SHA-256 over the concatenation of `parts`.
pub fn hmac_sha256(key: &[u8; 32], parts: &[&[u8]]) -> [u8; 32] {
    let mut inner_pad = [0x36u8; 64];
    let mut outer_pad = [0x5cu8; 64];
    for (i, k) in key.iter().enumerate() {
        inner_pad[i] ^= k;
        outer_pad[i] ^= k;
    }
    let mut inner = Sha256::new();
    inner.update(inner_pad);
    for part in parts {
        inner.update(part);
    }
    let inner = inner.finalize();
    let mut outer = Sha256::new();
    outer.update(outer_pad);
    outer.update(inner);
    outer.finalize().into()
}

/// Retry packets one client socket (address and port) is sent per second.
///
/// A client sends an Initial without a token once per connection attempt,
/// plus a retransmission or two, or two datagrams for a large ClientHello;
/// sixteen a second leaves room for that many attempts. A socket sending
/// thousands a second is flooding: its surplus Initials are dropped as
/// they are read, before any copy, MAC, Retry or send, so that the flood
/// costs the server little more than reading it and the traffic of real
/// connections queued behind it is reached sooner (`scripts/stress flood`,
/// figures in `docs/security.md`). Distinct sockets are counted apart, so
/// a flood from one socket takes nothing from another client on the same
/// address (a NAT).
pub const RETRIES_PER_SOURCE_PER_SECOND: u32 = 16;
/// Sources tracked within one second; beyond it new sources are let
/// through uncounted, so that a flood from spoofed addresses cannot grow
/// the table (each of its Initials then costs one Retry, as without it).
const MAX_TRACKED_SOURCES: usize = 65_536;
const BUDGET_WINDOW: Duration = Duration::from_secs(1);

/// How long the connection ID a client's Initial was sent to is remembered
/// after a Retry answered it: as long as the Retry's token is valid.
const RETRIED_MEMORY: Duration = Duration::from_secs(TOKEN_LIFETIME_SECS);
/// Connection IDs remembered at most (the oldest is forgotten first).
const MAX_RETRIED: usize = 4096;

/// Counts the Retry packets each source was sent in the current second,
/// and remembers which client connection IDs were answered with a Retry.
pub struct RetryBudget {
    per_source: u32,
    window_start: Option<Instant>,
    sent: HashMap<SocketAddr, u32>,
    /// The destination connection IDs of Initials answered with a Retry,
    /// when, oldest first.
    retried: VecDeque<(Instant, Vec<u8>)>,
    retried_at: HashMap<Vec<u8>, Instant>,
}

impl RetryBudget {
    /// A budget of `per_source` Retries per second for each source.
    pub fn new(per_source: u32) -> RetryBudget {
        RetryBudget {
            per_source,
            window_start: None,
            sent: HashMap::new(),
            retried: VecDeque::new(),
            retried_at: HashMap::new(),
        }
    }

    /// Notes that the Initial sent to `dcid` was answered with a Retry.
    pub fn note_retry(&mut self, dcid: &[u8], now: Instant) {
        while let Some((at, _)) = self.retried.front() {
            if self.retried.len() < MAX_RETRIED
                && now.saturating_duration_since(*at) < RETRIED_MEMORY
            {
                break;
            }
            if let Some((at, old)) = self.retried.pop_front() {
                if self.retried_at.get(&old) == Some(&at) {
                    self.retried_at.remove(&old);
                }
            }
        }
        self.retried.push_back((now, dcid.to_vec()));
        self.retried_at.insert(dcid.to_vec(), now);
    }

    /// Whether an Initial sent to `dcid` was answered with a Retry not long
    /// ago: the client then uses the Retry's connection ID, and one of its
    /// Initials sent again before the Retry reached it must get a Retry
    /// too, not a connection it will never use (that one would hold a slot
    /// until its idle timeout).
    pub fn was_retried(&self, dcid: &[u8], now: Instant) -> bool {
        self.retried_at
            .get(dcid)
            .is_some_and(|at| now.saturating_duration_since(*at) < RETRIED_MEMORY)
    }

    /// Whether `from` may be sent a Retry at `now`, counting it if so.
    pub fn allow(&mut self, from: SocketAddr, now: Instant) -> bool {
        let expired = self
            .window_start
            .is_none_or(|start| now.saturating_duration_since(start) >= BUDGET_WINDOW);
        if expired {
            self.window_start = Some(now);
            self.sent.clear();
            if self.sent.capacity() > 1024 {
                self.sent.shrink_to(1024);
            }
        }
        if let Some(count) = self.sent.get_mut(&from) {
            if *count >= self.per_source {
                return false;
            }
            *count += 1;
            return true;
        }
        if self.per_source == 0 {
            return false;
        }
        if self.sent.len() < MAX_TRACKED_SOURCES {
            self.sent.insert(from, 1);
        }
        true
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_case_2_shape() {
        // RFC 4231 test case 2 has a 4-byte key; ours are 32 bytes, zero
        // padded, which HMAC treats identically (keys are padded to the
        // block size with zeros).
        let mut key = [0u8; 32];
        key[..4].copy_from_slice(b"Jefe");
        let mac = hmac_sha256(&key, &[b"what do ya want ", b"for nothing?"]);
        assert_eq!(
            hex::encode(mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_source_gets_its_budget_of_retries_per_second_and_no_more() {
        let budget_per_second = 3;
        let mut budget = RetryBudget::new(budget_per_second);
        let flooder: SocketAddr = "192.0.2.1:4000".parse().unwrap();
        let same_ip_other_port: SocketAddr = "192.0.2.1:4001".parse().unwrap();
        let t0 = Instant::now();
        let allowed = (0..10)
            .filter(|i| budget.allow(flooder, t0 + Duration::from_millis(*i)))
            .count();
        assert_eq!(allowed, budget_per_second as usize);
        // Another socket of the same address is counted apart.
        assert!(budget.allow(same_ip_other_port, t0 + Duration::from_millis(20)));
        // Still within the second: refused; a second later: a new budget.
        assert!(!budget.allow(flooder, t0 + Duration::from_millis(999)));
        assert!(budget.allow(flooder, t0 + Duration::from_millis(1000)));
    }

    #[test]
    fn a_zero_budget_allows_nothing_and_untracked_sources_pass() {
        let mut none = RetryBudget::new(0);
        let t0 = Instant::now();
        assert!(!none.allow("192.0.2.1:1".parse().unwrap(), t0));
        // With the table full, a new source passes uncounted.
        let mut budget = RetryBudget::new(1);
        for port in 0..MAX_TRACKED_SOURCES {
            let from = SocketAddr::from(([10, 0, (port >> 8) as u8, port as u8], 443));
            assert!(budget.allow(from, t0));
        }
        let untracked: SocketAddr = "192.0.2.9:9".parse().unwrap();
        assert!(budget.allow(untracked, t0));
        assert!(budget.allow(untracked, t0));
        assert_eq!(budget.sent.len(), MAX_TRACKED_SOURCES);
    }

    #[test]
    fn tokens_validate_only_for_their_peer_cid_and_time() {
        let key = TokenKey::from_bytes([7; 32]);
        let peer: SocketAddr = "192.0.2.1:4000".parse().unwrap();
        let odcid = [1u8; 8];
        let cid = [2u8; 20];
        let t0 = 1_000_000;
        let token = key.mint(peer, &odcid, &cid, t0);
        assert_eq!(key.validate(&token, peer, &cid, t0), Some(odcid.to_vec()));
        assert_eq!(
            key.validate(&token, peer, &cid, t0 + TOKEN_LIFETIME_SECS),
            Some(odcid.to_vec())
        );
        assert_eq!(
            key.validate(&token, peer, &cid, t0 + TOKEN_LIFETIME_SECS + 1),
            None
        );
        assert_eq!(key.validate(&token, peer, &cid, t0 - 2), None);
        let other_port: SocketAddr = "192.0.2.1:4001".parse().unwrap();
        assert_eq!(key.validate(&token, other_port, &cid, t0), None);
        let other_ip: SocketAddr = "192.0.2.2:4000".parse().unwrap();
        assert_eq!(key.validate(&token, other_ip, &cid, t0), None);
        assert_eq!(key.validate(&token, peer, &[3u8; 20], t0), None);
        assert_eq!(
            TokenKey::from_bytes([8; 32]).validate(&token, peer, &cid, t0),
            None
        );
        // Every single-bit flip is refused.
        for i in 0..token.len() * 8 {
            let mut bad = token.clone();
            bad[i / 8] ^= 1 << (i % 8);
            assert_eq!(key.validate(&bad, peer, &cid, t0), None, "bit {i}");
        }
        // Truncations and garbage.
        for n in 0..token.len() {
            assert_eq!(key.validate(&token[..n], peer, &cid, t0), None);
        }
        assert_eq!(key.validate(&[1, 0xff, 0xff], peer, &cid, t0), None);
    }

    #[test]
    fn new_tokens_validate_only_for_their_prefix_server_and_lifetime() {
        let key = TokenKey::from_bytes([7; 32]);
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let t0 = 1_000_000;
        let life = 3600;
        let token = key.mint_new_token(ip, t0);
        // The MAC computed here, independently of mint_new_token's layout
        // code: HMAC over version, issue time, the 8 random bytes and the
        // IPv4-mapped address.
        let mut body = vec![NEW_TOKEN_VERSION];
        body.extend_from_slice(&t0.to_be_bytes());
        body.extend_from_slice(&token[9..17]);
        let mapped = std::net::Ipv4Addr::new(192, 0, 2, 1)
            .to_ipv6_mapped()
            .octets();
        assert_eq!(token.len(), 49);
        assert_eq!(token[..17], body[..]);
        assert_eq!(token[17..], hmac_sha256(&[7; 32], &[&body, &mapped])[..]);
        // No two alike, even in the same second.
        assert_ne!(token, key.mint_new_token(ip, t0));
        assert!(key.validate_new_token(&token, ip, t0, life));
        assert!(key.validate_new_token(&token, ip, t0 + life, life));
        assert!(
            !key.validate_new_token(&token, ip, t0 + life + 1, life),
            "expired"
        );
        assert!(
            !key.validate_new_token(&token, ip, t0 - 2, life),
            "from the future"
        );
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        assert!(
            !key.validate_new_token(&token, other, t0, life),
            "other address"
        );
        let other_server = TokenKey::from_bytes([8; 32]);
        assert!(!other_server.validate_new_token(&token, ip, t0, life));
        // Never a Retry token, and a Retry token never a NEW_TOKEN token.
        assert!(!is_retry_token(&token));
        let peer = SocketAddr::new(ip, 4000);
        assert_eq!(key.validate(&token, peer, &[2; 20], t0), None);
        let retry_token = key.mint(peer, &[1; 8], &[2; 20], t0);
        assert!(is_retry_token(&retry_token));
        assert!(!key.validate_new_token(&retry_token, ip, t0, life));
        for i in 0..token.len() * 8 {
            let mut bad = token.clone();
            bad[i / 8] ^= 1 << (i % 8);
            assert!(!key.validate_new_token(&bad, ip, t0, life), "bit {i}");
        }
        for n in 0..token.len() {
            assert!(!key.validate_new_token(&token[..n], ip, t0, life));
        }
    }

    #[test]
    fn new_tokens_hold_for_an_ipv6_64_only() {
        let key = TokenKey::from_bytes([7; 32]);
        let host: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let same_64: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let other_64: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        let token = key.mint_new_token(host, 5);
        assert!(key.validate_new_token(&token, same_64, 5, 10));
        assert!(!key.validate_new_token(&token, other_64, 5, 10));
    }
    #[test]
    fn retried_connection_ids_are_remembered_for_the_token_lifetime_and_bounded() {
        let mut budget = RetryBudget::new(16);
        let t0 = Instant::now();
        budget.note_retry(b"client-cid-1", t0);
        assert!(budget.was_retried(b"client-cid-1", t0 + Duration::from_secs(9)));
        assert!(!budget.was_retried(b"client-cid-2", t0));
        assert!(!budget.was_retried(b"client-cid-1", t0 + RETRIED_MEMORY));
        // At most MAX_RETRIED: the oldest is forgotten first.
        for i in 0..MAX_RETRIED as u32 {
            budget.note_retry(&i.to_be_bytes(), t0);
        }
        assert_eq!(budget.retried.len(), MAX_RETRIED);
        assert_eq!(budget.retried_at.len(), MAX_RETRIED);
        assert!(!budget.was_retried(b"client-cid-1", t0));
        assert!(budget.was_retried(&1u32.to_be_bytes(), t0));
        budget.note_retry(b"newest", t0);
        assert!(!budget.was_retried(&0u32.to_be_bytes(), t0));
        assert!(budget.was_retried(b"newest", t0));
        assert_eq!(budget.retried_at.len(), MAX_RETRIED);
    }
}
