//! How an AQT-enabled emulator hands a datagram's accumulated queueing time
//! (RoVegas's AQT) to a real receiving process: in an IPv4 option, as
//! RoVegas's routers do. The one definition of the format, shared by the
//! emulator (`vegas-emu`, the writer) and the apps (`quiche-vegas`, the
//! reader with `--aqt-from-ip-option`).
//!
//! The option rides outside the encrypted QUIC packet, in the IP header
//! that carries the UDP datagram, so a receiver that does not look at it
//! (any QUIC stack) is unaffected: Linux ignores unknown options in received
//! packets. A receiver that wants it enables `IP_RECVOPTS` on its UDP socket
//! and gets the datagram's IP options in an `IP_OPTIONS`/`IP_RECVOPTS`
//! control message of `recvmsg`; [`find_in_ip_options`] reads the value out
//! of those bytes, and the application hands it to quiche with
//! `Connection::set_next_datagram_queueing_time` before `recv` (see
//! `docs/extensions.md`).
//!
//! Option layout (8 bytes, keeping the header a multiple of 4 bytes):
//!
//! ```text
//!  0      1      2      3      4                          8
//! +------+------+------+------+--------------------------+
//! | 0x1E | 0x08 | 0xA7 | 0x00 | AQT, microseconds (u32)  |
//! +------+------+------+------+--------------------------+
//! ```
//!
//! - type 30 (0x1E): RFC 4727's experimental IPv4 option (copy 0, class 0,
//!   number 30), not copied into fragments;
//! - length 8;
//! - 0xA7: marks this experiment (RFC 4727 asks experiments sharing the
//!   codepoint to tell themselves apart), then a reserved zero byte;
//! - the accumulated queueing time in microseconds, big-endian, saturating
//!   at 2^32 - 1 (71 minutes).
//!
//! Each AQT-enabled emulator on the path adds its queueing time to the value
//! already there, or inserts the option. The emulator writes it into the IP
//! header directly in bridge mode; in UDP mode it sets it with the
//! `IP_OPTIONS` socket option before each send, which for an unknown option
//! type needs CAP_NET_RAW (root). IPv6 has no such option here: AQT reaches
//! IPv4 receivers only.

/// RFC 4727 experimental IPv4 option number 30, copy 0, class 0.
pub const OPTION_TYPE: u8 = 0x1E;
/// Bytes of the whole option.
pub const OPTION_LEN: usize = 8;
/// Marks this experiment's use of the shared experimental codepoint.
pub const OPTION_MAGIC: u8 = 0xA7;

/// The option carrying `aqt_ns` (rounded down to microseconds).
pub fn encode_option(aqt_ns: u64) -> [u8; OPTION_LEN] {
    let micros = u32::try_from(aqt_ns / 1_000).unwrap_or(u32::MAX);
    let v = micros.to_be_bytes();
    [
        OPTION_TYPE,
        OPTION_LEN as u8,
        OPTION_MAGIC,
        0,
        v[0],
        v[1],
        v[2],
        v[3],
    ]
}

/// Where our option is among IPv4 `options` (the header bytes after the
/// fixed 20), and its value in microseconds. Malformed option lists give
/// `None`.
pub fn locate(options: &[u8]) -> Option<(usize, u32)> {
    let mut i = 0;
    while i < options.len() {
        match options[i] {
            0 => return None, // end of option list
            1 => i += 1,      // no-operation
            kind => {
                let len = usize::from(*options.get(i + 1)?);
                if len < 2 || i + len > options.len() {
                    return None;
                }
                if kind == OPTION_TYPE && len == OPTION_LEN && options[i + 2] == OPTION_MAGIC {
                    let v = &options[i + 4..i + 8];
                    return Some((i, u32::from_be_bytes([v[0], v[1], v[2], v[3]])));
                }
                i += len;
            }
        }
    }
    None
}

/// The accumulated queueing time in microseconds carried by a datagram
/// whose IP options (the data of an `IP_RECVOPTS` control message) are
/// `options`; `None` without our option.
pub fn find_in_ip_options(options: &[u8]) -> Option<u32> {
    locate(options).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_and_find() {
        let o = encode_option(12_345_678);
        assert_eq!(find_in_ip_options(&o), Some(12_345));
        // After a no-operation and another option.
        let mut list = vec![1, 0x44, 4, 5, 0];
        list.extend_from_slice(&o);
        assert_eq!(find_in_ip_options(&list), Some(12_345));
        assert_eq!(find_in_ip_options(&[1, 1, 0, 0]), None);
        // Truncated or lying lengths.
        assert_eq!(find_in_ip_options(&o[..6]), None);
        assert_eq!(find_in_ip_options(&[0x1E, 1]), None);
        // Another experiment on the same codepoint.
        let mut other = o;
        other[2] = 0;
        assert_eq!(find_in_ip_options(&other), None);
        assert_eq!(encode_option(u64::MAX)[4..], [0xff; 4]);
    }
}
