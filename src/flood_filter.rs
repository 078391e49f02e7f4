//! A kernel filter on the server's socket that drops, before they are
//! queued, the token-less Initials of client sockets that flooded.
//!
//! The Retry budget ([`crate::retry::RetryBudget`]) already refuses a
//! flooding socket its Retries, but the server still had to read every
//! datagram of the flood to refuse it: 5,000 Initials cost it 16 ms of CPU,
//! and a download queued behind them took 3.3 times its unloaded time
//! (`scripts/stress flood`, `docs/security.md`). Once a socket is over its
//! budget, this filter (classic BPF, `SO_ATTACH_FILTER`) lets the kernel
//! drop its token-less Initials as they arrive, for [`BLOCK_FOR`]; the
//! server never reads them.
//!
//! What is dropped is exactly what the budget would refuse: long-header
//! Initials with an empty token, from one blocked address and port. Every
//! other datagram passes, including that socket's Initials carrying a
//! token and its packets of established connections. A spoofer who makes a
//! victim's address and port look like a flood takes from the victim no
//! more than the budget already did: its token-less Initials, for a while.
//! The block is not renewable: a socket is blocked at most once per
//! [`BLOCK_AGAIN_AFTER`] (spoofed floods every few seconds locked a victim's
//! socket out for good when each renewed it); between blocks the Retry
//! budget alone refuses its excess, which the server then reads.
//!
//! While the filter is attached the kernel also drops a datagram too short
//! for the header fields the filter reads (classic BPF ends with "drop" on
//! a read past the end): an empty one, or a long-header Initial cut off
//! before its token length. quiche would refuse both as malformed.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// How long a flooding socket's token-less Initials are dropped.
pub const BLOCK_FOR: Duration = Duration::from_secs(10);
/// Sockets blocked at once; one more replaces the one blocked longest ago.
pub const MAX_BLOCKED: usize = 64;
/// A socket is blocked at most once in this long, counted from the start
/// of its last block.
pub const BLOCK_AGAIN_AFTER: Duration = Duration::from_secs(60);
/// Sockets whose last block is remembered; beyond, the oldest is forgotten
/// (and could be blocked again sooner).
const MAX_REMEMBERED: usize = 4096;

/// The blocked sockets and the filter that holds them.
#[derive(Default)]
pub struct FloodFilter {
    /// Each blocked socket and when it is let through again, oldest first.
    blocked: Vec<(SocketAddr, Instant)>,
    /// When each socket's last block began, within [`BLOCK_AGAIN_AFTER`].
    last_blocked: HashMap<SocketAddr, Instant>,
}

impl FloodFilter {
    /// Blocks `source` on `socket` until `now + BLOCK_FOR`, unless it is
    /// blocked already or its last block began less than
    /// [`BLOCK_AGAIN_AFTER`] ago; whether it blocked.
    pub fn block(
        &mut self,
        socket: &UdpSocket,
        source: SocketAddr,
        now: Instant,
    ) -> io::Result<bool> {
        let source = canonical(source);
        self.last_blocked
            .retain(|_, at| now.saturating_duration_since(*at) < BLOCK_AGAIN_AFTER);
        if self.last_blocked.contains_key(&source) || self.blocked.iter().any(|(s, _)| *s == source)
        {
            return Ok(false);
        }
        if self.last_blocked.len() >= MAX_REMEMBERED {
            if let Some(oldest) = self
                .last_blocked
                .iter()
                .min_by_key(|(_, at)| **at)
                .map(|(s, _)| *s)
            {
                self.last_blocked.remove(&oldest);
            }
        }
        self.last_blocked.insert(source, now);
        if self.blocked.len() >= MAX_BLOCKED {
            self.blocked.remove(0);
        }
        self.blocked.push((source, now + BLOCK_FOR));
        self.install(socket)?;
        Ok(true)
    }

    /// Lets through the sockets whose time is up (a filter with no socket
    /// left is removed).
    pub fn expire(&mut self, socket: &UdpSocket, now: Instant) -> io::Result<()> {
        let before = self.blocked.len();
        self.blocked.retain(|(_, until)| *until > now);
        if self.blocked.len() == before {
            return Ok(());
        }
        self.install(socket)
    }

    /// When the next blocked socket is let through.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.blocked.iter().map(|(_, until)| *until).min()
    }

    /// The sockets blocked now.
    pub fn blocked(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        self.blocked.iter().map(|(s, _)| *s)
    }

    fn install(&self, socket: &UdpSocket) -> io::Result<()> {
        if self.blocked.is_empty() {
            return detach(socket);
        }
        let sources: Vec<SocketAddr> = self.blocked().collect();
        attach(socket, &program(&sources))
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it carries: a
/// dual-stack socket sees IPv4 packets with IPv4 headers.
fn canonical(source: SocketAddr) -> SocketAddr {
    match source.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), source.port()),
            None => source,
        },
        IpAddr::V4(_) => source,
    }
}

// Classic BPF, as the kernel runs it on a UDP socket: absolute offsets
// start at the UDP header; `NET` reaches the IP header.
const LD_B_ABS: u16 = 0x30; // BPF_LD | BPF_B | BPF_ABS
const LD_H_ABS: u16 = 0x28; // BPF_LD | BPF_H | BPF_ABS
const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const LD_B_IND: u16 = 0x50; // BPF_LD | BPF_B | BPF_IND
const AND_K: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
const ADD_X: u16 = 0x0c; // BPF_ALU | BPF_ADD | BPF_X
const RSH_K: u16 = 0x74; // BPF_ALU | BPF_RSH | BPF_K
const TAX: u16 = 0x07; // BPF_MISC | BPF_TAX
const JA: u16 = 0x05; // BPF_JMP | BPF_JA
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K
const NET: u32 = libc::SKF_NET_OFF as u32;
/// The UDP header's length: the QUIC packet starts after it.
const UDP: u32 = 8;
const ACCEPT: u32 = u32::MAX;
const DROP: u32 = 0;

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jeq(k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: JEQ_K,
        jt,
        jf,
        k,
    }
}

/// The filter dropping token-less Initials from `sources`.
pub fn program(sources: &[SocketAddr]) -> Vec<libc::sock_filter> {
    let mut p = vec![
        // A long-header Initial (RFC 9000 17.2.2: form bit set, type 0)?
        stmt(LD_B_ABS, UDP),
        stmt(AND_K, 0xb0),
        jeq(0x80, 1, 0),
        stmt(RET_K, ACCEPT),
        // Its token length (a varint; zero is the single byte 0) after
        // the version, DCID and SCID: X = DCID length, then + SCID length.
        stmt(LD_B_ABS, UDP + 5),
        stmt(TAX, 0),
        stmt(LD_B_IND, UDP + 6),
        stmt(ADD_X, 0),
        stmt(TAX, 0),
        stmt(LD_B_IND, UDP + 7),
        jeq(0, 1, 0),
        stmt(RET_K, ACCEPT),
        // IPv4 or IPv6 header?
        stmt(LD_B_ABS, NET),
        stmt(RSH_K, 4),
        jeq(6, 0, 1),
    ];
    let (v4, v6): (Vec<SocketAddr>, Vec<SocketAddr>) = sources
        .iter()
        .map(|s| canonical(*s))
        .partition(|s| s.is_ipv4());
    let mut v4_part = Vec::new();
    for s in &v4 {
        let IpAddr::V4(ip) = s.ip() else { continue };
        v4_part.extend([
            stmt(LD_W_ABS, NET + 12),
            jeq(u32::from(ip), 0, 3),
            stmt(LD_H_ABS, 0),
            jeq(u32::from(s.port()), 0, 1),
            stmt(RET_K, DROP),
        ]);
    }
    v4_part.push(stmt(RET_K, ACCEPT));
    // Over the IPv4 part to the IPv6 part.
    p.push(stmt(JA, v4_part.len() as u32));
    p.extend(v4_part);
    for s in &v6 {
        let IpAddr::V6(ip) = s.ip() else { continue };
        let octets = ip.octets();
        let word = |i: usize| {
            u32::from_be_bytes([
                octets[4 * i],
                octets[4 * i + 1],
                octets[4 * i + 2],
                octets[4 * i + 3],
            ])
        };
        p.extend([
            stmt(LD_W_ABS, NET + 8),
            jeq(word(0), 0, 9),
            stmt(LD_W_ABS, NET + 12),
            jeq(word(1), 0, 7),
            stmt(LD_W_ABS, NET + 16),
            jeq(word(2), 0, 5),
            stmt(LD_W_ABS, NET + 20),
            jeq(word(3), 0, 3),
            stmt(LD_H_ABS, 0),
            jeq(u32::from(s.port()), 0, 1),
            stmt(RET_K, DROP),
        ]);
    }
    p.push(stmt(RET_K, ACCEPT));
    p
}

fn attach(socket: &UdpSocket, program: &[libc::sock_filter]) -> io::Result<()> {
    let len = u16::try_from(program.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "filter too long"))?;
    let fprog = libc::sock_fprog {
        len,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: `fprog` points to `len` instructions that live for the call;
    // the kernel copies them.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_ATTACH_FILTER,
            (&fprog as *const libc::sock_fprog).cast(),
            std::mem::size_of::<libc::sock_fprog>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn detach(socket: &UdpSocket) -> io::Result<()> {
    let unused: libc::c_int = 0;
    // SAFETY: SO_DETACH_FILTER reads no option value; one int is given.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_DETACH_FILTER,
            (&unused as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    // No filter was attached: nothing to remove.
    if e.raw_os_error() == Some(libc::ENOENT) {
        Ok(())
    } else {
        Err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A QUIC long-header packet of `first` byte with `token` (a one-byte
    /// varint length), padded to 1,200 bytes.
    fn long_header(first: u8, dcid: &[u8], scid: &[u8], token: &[u8]) -> Vec<u8> {
        let mut p = vec![first, 0, 0, 0, 1];
        p.push(dcid.len() as u8);
        p.extend_from_slice(dcid);
        p.push(scid.len() as u8);
        p.extend_from_slice(scid);
        p.push(token.len() as u8);
        p.extend_from_slice(token);
        p.resize(1200, 0);
        p
    }

    /// Which of `datagrams`, each sent from its socket, reach `receiver`.
    fn arriving(receiver: &UdpSocket, datagrams: &[(&UdpSocket, Vec<u8>)]) -> Vec<usize> {
        let to = receiver.local_addr().unwrap();
        for (i, (from, data)) in datagrams.iter().enumerate() {
            let mut tagged = data.clone();
            // The last byte says which datagram it was.
            *tagged.last_mut().unwrap() = i as u8;
            from.send_to(&tagged, to).unwrap();
        }
        // Loopback delivers within the send call; what is not queued now
        // was dropped.
        receiver.set_nonblocking(true).unwrap();
        let mut got = Vec::new();
        let mut buf = [0; 2048];
        while let Ok((n, _)) = receiver.recv_from(&mut buf) {
            got.push(usize::from(buf[n - 1]));
        }
        got
    }

    fn drops_only_token_less_initials_of_the_blocked(any: &str) {
        let Ok(server) = UdpSocket::bind(any) else {
            return; // no such address family here
        };
        let flooder = UdpSocket::bind(any).unwrap();
        let other = UdpSocket::bind(any).unwrap();
        let mut filter = FloodFilter::default();
        let now = Instant::now();
        filter
            .block(&server, flooder.local_addr().unwrap(), now)
            .unwrap();
        let cid = [7u8; 20];
        let initial = long_header(0xc3, &cid, &cid, &[]);
        let with_token = long_header(0xc3, &cid, &[1; 8], &[9; 40]);
        let handshake = long_header(0xe3, &cid, &cid, &[]);
        let short_header = vec![0x43; 1200];
        let got = arriving(
            &server,
            &[
                (&flooder, initial.clone()),                      // 0: dropped
                (&flooder, with_token),                           // 1
                (&flooder, handshake),                            // 2
                (&flooder, short_header),                         // 3
                (&other, initial.clone()),                        // 4
                (&flooder, long_header(0xc3, &[1; 8], &[], &[])), // 5: dropped
            ],
        );
        assert_eq!(got, vec![1, 2, 3, 4], "on {any}");
        // Too short for the fields the filter reads, from anyone: dropped.
        let cut_off = long_header(0xc3, &cid, &cid, &[])[..20].to_vec();
        let got = arriving(&server, &[(&other, cut_off), (&other, vec![0x43; 20])]);
        assert_eq!(got, vec![1], "on {any}");
        // Once its time is up, the socket is let through again.
        filter.expire(&server, now + BLOCK_FOR).unwrap();
        assert_eq!(filter.next_expiry(), None);
        assert_eq!(arriving(&server, &[(&flooder, initial)]), vec![0]);
    }

    #[test]
    fn the_filter_drops_only_the_blocked_sockets_token_less_initials_ipv4() {
        drops_only_token_less_initials_of_the_blocked("127.0.0.1:0");
    }

    #[test]
    fn the_filter_drops_only_the_blocked_sockets_token_less_initials_ipv6() {
        drops_only_token_less_initials_of_the_blocked("[::1]:0");
    }

    #[test]
    fn blocking_more_than_the_cap_lets_the_oldest_through() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut filter = FloodFilter::default();
        let t0 = Instant::now();
        let source = |i: usize| SocketAddr::from(([10, 0, 0, 1], 1000 + i as u16));
        for i in 0..=MAX_BLOCKED {
            filter
                .block(&server, source(i), t0 + Duration::from_millis(i as u64))
                .unwrap();
        }
        let blocked: Vec<SocketAddr> = filter.blocked().collect();
        assert_eq!(blocked.len(), MAX_BLOCKED);
        assert!(!blocked.contains(&source(0)));
        assert!(blocked.contains(&source(MAX_BLOCKED)));
        assert_eq!(
            filter.next_expiry(),
            Some(t0 + Duration::from_millis(1) + BLOCK_FOR)
        );
        // Blocking again neither renews nor adds a second entry.
        assert!(!filter
            .block(&server, source(1), t0 + Duration::from_secs(1))
            .unwrap());
        assert_eq!(filter.blocked().filter(|s| *s == source(1)).count(), 1);
        assert_eq!(
            filter.next_expiry(),
            Some(t0 + Duration::from_millis(1) + BLOCK_FOR)
        );
    }

    /// Spoofed floods every few seconds used to renew a victim socket's
    /// block for ever; now it is blocked at most once a minute.
    #[test]
    fn a_socket_is_blocked_at_most_once_a_minute() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut filter = FloodFilter::default();
        let victim = SocketAddr::from(([10, 0, 0, 9], 4433));
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        assert!(filter.block(&server, victim, at(0)).unwrap());
        let mut blocked_seconds = 0;
        // A flood every 5 s for two minutes: blocked at 0 s and 60 s only.
        for s in 0..120 {
            if s % 5 == 0 {
                filter.block(&server, victim, at(s)).unwrap();
            }
            filter.expire(&server, at(s)).unwrap();
            if filter.blocked().any(|b| b == victim) {
                blocked_seconds += 1;
            }
        }
        let per_block = BLOCK_FOR.as_secs();
        assert_eq!(
            blocked_seconds,
            2 * per_block,
            "blocked {blocked_seconds} of 120 s"
        );
    }

    #[test]
    fn a_mapped_ipv4_source_is_matched_as_ipv4() {
        let mapped: SocketAddr = "[::ffff:192.0.2.1]:443".parse().unwrap();
        assert_eq!(canonical(mapped), "192.0.2.1:443".parse().unwrap());
        let v6: SocketAddr = "[2001:db8::1]:443".parse().unwrap();
        assert_eq!(canonical(v6), v6);
    }
}
