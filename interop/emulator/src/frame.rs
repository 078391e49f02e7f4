//! Ethernet frames in bridge mode: which ones go through the link model,
//! their size on the link, the AQT option, and checksums.

use crate::aqt;

pub const ETHERNET_HEADER: usize = 14;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86DD;
const PROTOCOL_UDP: u8 = 17;
/// The largest IPv4 header (IHL 15).
const MAX_IPV4_HEADER: usize = 60;

/// What a frame is, for the emulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Not IP (ARP and the like): forwarded at once, outside the model, so
    /// that address resolution never waits for the satellite or gets lost.
    Passthrough,
    /// An IP packet, through the model. `udp_payload` is the UDP payload's
    /// length for an unfragmented UDP datagram; `ip_bytes` the packet's
    /// length.
    Ip {
        udp_payload: Option<usize>,
        ip_bytes: usize,
    },
}

fn u16_at(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(i)?, *b.get(i + 1)?]))
}

/// Classifies an Ethernet frame. Malformed IP packets are still IP (the
/// model carries them; the receiver drops them as it would anyway).
pub fn classify(frame: &[u8]) -> Kind {
    let Some(ethertype) = u16_at(frame, 12) else {
        return Kind::Passthrough;
    };
    let ip = &frame[ETHERNET_HEADER.min(frame.len())..];
    match ethertype {
        ETHERTYPE_IPV4 => {
            let Some(&vihl) = ip.first() else {
                return Kind::Ip {
                    udp_payload: None,
                    ip_bytes: 0,
                };
            };
            let header = usize::from(vihl & 0x0f) * 4;
            let total = u16_at(ip, 2).map_or(ip.len(), usize::from).min(ip.len());
            let fragment = u16_at(ip, 6).is_some_and(|f| f & 0x3fff != 0);
            let udp = ip.get(9) == Some(&PROTOCOL_UDP) && !fragment;
            let udp_payload = udp
                .then(|| u16_at(ip, header + 4))
                .flatten()
                .map(usize::from)
                .filter(|&l| l >= 8 && header + l <= total)
                .map(|l| l - 8);
            Kind::Ip {
                udp_payload,
                ip_bytes: total,
            }
        }
        ETHERTYPE_IPV6 => {
            let payload = u16_at(ip, 4).map_or(0, usize::from);
            let total = (40 + payload).min(ip.len());
            let udp_payload = (ip.get(6) == Some(&PROTOCOL_UDP))
                .then(|| u16_at(ip, 44))
                .flatten()
                .map(usize::from)
                .filter(|&l| l >= 8 && 40 + l <= total)
                .map(|l| l - 8);
            Kind::Ip {
                udp_payload,
                ip_bytes: total,
            }
        }
        _ => Kind::Passthrough,
    }
}

/// The Internet checksum's one's-complement sum of `data`, added to `sum`.
fn sum16(mut sum: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    sum
}

fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Recomputes the IPv4 header checksum of the packet at `ip`.
fn ipv4_header_checksum(ip: &mut [u8], header: usize) {
    ip[10] = 0;
    ip[11] = 0;
    let c = fold(sum16(0, &ip[..header]));
    ip[10..12].copy_from_slice(&c.to_be_bytes());
}

/// Recomputes the UDP checksum of an unfragmented IPv4 or IPv6 UDP packet.
/// A sender whose interface offloads checksums hands over frames whose UDP
/// checksum is not filled in yet; re-injected elsewhere unchanged they would
/// be dropped, so the emulator fills it in for every UDP datagram.
pub fn fix_udp_checksum(frame: &mut [u8]) {
    let Some(ethertype) = u16_at(frame, 12) else {
        return;
    };
    if frame.len() < ETHERNET_HEADER {
        return;
    }
    let ip = &mut frame[ETHERNET_HEADER..];
    let (pseudo, udp_start, udp_len) = match ethertype {
        ETHERTYPE_IPV4 => {
            let Some(&vihl) = ip.first() else { return };
            let header = usize::from(vihl & 0x0f) * 4;
            let fragment = u16_at(ip, 6).is_none_or(|f| f & 0x3fff != 0);
            if ip.get(9) != Some(&PROTOCOL_UDP) || fragment || header < 20 {
                return;
            }
            let Some(len) = u16_at(ip, header + 4).map(usize::from) else {
                return;
            };
            if len < 8 || header + len > ip.len() {
                return;
            }
            let mut pseudo = sum16(0, &ip[12..20]);
            pseudo += u32::from(PROTOCOL_UDP) + len as u32;
            (pseudo, header, len)
        }
        ETHERTYPE_IPV6 => {
            if ip.get(6) != Some(&PROTOCOL_UDP) {
                return;
            }
            let Some(len) = u16_at(ip, 44).map(usize::from) else {
                return;
            };
            if len < 8 || 40 + len > ip.len() {
                return;
            }
            let mut pseudo = sum16(0, &ip[8..40]);
            pseudo += u32::from(PROTOCOL_UDP) + len as u32;
            (pseudo, 40, len)
        }
        _ => return,
    };
    let udp = &mut ip[udp_start..udp_start + udp_len];
    udp[6] = 0;
    udp[7] = 0;
    let mut c = fold(sum16(pseudo, udp));
    if c == 0 {
        c = 0xffff;
    }
    udp[6..8].copy_from_slice(&c.to_be_bytes());
}

/// Cuts a UDP GSO super-frame (one Ethernet/IP/UDP header, then the
/// payloads of several datagrams of `segment` bytes each, the last one
/// possibly shorter) into the frames the sender's kernel would have sent
/// without the offload: headers copied, lengths, IPv4 identification and
/// checksums fixed. Anything else comes back whole.
pub fn split_udp_gso(frame: &[u8], segment: usize) -> Vec<Vec<u8>> {
    let whole = || vec![frame.to_vec()];
    if segment == 0 {
        return whole();
    }
    let (ip_header, v4) = match u16_at(frame, 12) {
        Some(ETHERTYPE_IPV4) => match frame.get(ETHERNET_HEADER) {
            Some(&vihl) if frame.get(ETHERNET_HEADER + 9) == Some(&PROTOCOL_UDP) => {
                (usize::from(vihl & 0x0f) * 4, true)
            }
            _ => return whole(),
        },
        Some(ETHERTYPE_IPV6) if frame.get(ETHERNET_HEADER + 6) == Some(&PROTOCOL_UDP) => {
            (40, false)
        }
        _ => return whole(),
    };
    let headers = ETHERNET_HEADER + ip_header + 8;
    if ip_header < 20 || frame.len() <= headers + segment {
        return whole();
    }
    let ip_id = u16_at(frame, ETHERNET_HEADER + 4).unwrap_or(0);
    frame[headers..]
        .chunks(segment)
        .enumerate()
        .map(|(i, payload)| {
            let mut f = Vec::with_capacity(headers + payload.len());
            f.extend_from_slice(&frame[..headers]);
            f.extend_from_slice(payload);
            let udp_len = (8 + payload.len()) as u16;
            let ip = ETHERNET_HEADER;
            if v4 {
                let total = (ip_header + 8 + payload.len()) as u16;
                f[ip + 2..ip + 4].copy_from_slice(&total.to_be_bytes());
                f[ip + 4..ip + 6].copy_from_slice(&ip_id.wrapping_add(i as u16).to_be_bytes());
                ipv4_header_checksum(&mut f[ip..], ip_header);
            } else {
                f[ip + 4..ip + 6].copy_from_slice(&udp_len.to_be_bytes());
            }
            let udp = ip + ip_header;
            f[udp + 4..udp + 6].copy_from_slice(&udp_len.to_be_bytes());
            fix_udp_checksum(&mut f);
            f
        })
        .collect()
}

/// Why a datagram's AQT could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AqtError {
    /// Not IPv4.
    NotIpv4,
    /// The header already has 52 or more bytes: no room for 8 more.
    NoRoom,
    /// The packet would exceed the MTU.
    TooBig,
}

/// Adds `aqt_ns` to the AQT option of the IPv4 packet in `frame`, inserting
/// the option if absent; fixes the lengths and the header checksum. Any
/// Ethernet padding is dropped.
pub fn add_aqt(frame: &mut Vec<u8>, aqt_ns: u64, mtu: usize) -> Result<(), AqtError> {
    if u16_at(frame, 12) != Some(ETHERTYPE_IPV4) || frame.len() < ETHERNET_HEADER + 20 {
        return Err(AqtError::NotIpv4);
    }
    let ip = ETHERNET_HEADER;
    let header = usize::from(frame[ip] & 0x0f) * 4;
    let total = u16_at(frame, ip + 2).map_or(0, usize::from);
    if header < 20 || total < header || ip + total > frame.len() {
        return Err(AqtError::NotIpv4);
    }
    frame.truncate(ip + total);
    if let Some((at, old)) = aqt::locate(&frame[ip + 20..ip + header]) {
        let micros = u64::from(old) + aqt_ns / 1_000;
        let option = aqt::encode_option(micros.saturating_mul(1_000));
        let start = ip + 20 + at;
        frame[start..start + aqt::OPTION_LEN].copy_from_slice(&option);
    } else {
        if header + aqt::OPTION_LEN > MAX_IPV4_HEADER {
            return Err(AqtError::NoRoom);
        }
        if total + aqt::OPTION_LEN > mtu {
            return Err(AqtError::TooBig);
        }
        let option = aqt::encode_option(aqt_ns);
        let at = ip + header;
        frame.splice(at..at, option);
        frame[ip] = (frame[ip] & 0xf0) | ((header + aqt::OPTION_LEN) / 4) as u8;
        let new_total = (total + aqt::OPTION_LEN) as u16;
        frame[ip + 2..ip + 4].copy_from_slice(&new_total.to_be_bytes());
    }
    let header = usize::from(frame[ip] & 0x0f) * 4;
    ipv4_header_checksum(&mut frame[ip..], header);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Ethernet frame with an IPv4/UDP datagram of `payload` bytes and a
    /// correct checksum (as a peer's kernel would make it).
    pub fn udp_frame(payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let total = (20 + 8 + payload.len()) as u16;
        f.extend_from_slice(&[0x45, 0]);
        f.extend_from_slice(&total.to_be_bytes());
        f.extend_from_slice(&[0, 1, 0x40, 0, 64, PROTOCOL_UDP, 0, 0]);
        f.extend_from_slice(&[10, 77, 0, 1, 10, 77, 0, 2]);
        f.extend_from_slice(&4433u16.to_be_bytes());
        f.extend_from_slice(&5555u16.to_be_bytes());
        f.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(payload);
        ipv4_header_checksum(&mut f[14..], 20);
        fix_udp_checksum(&mut f);
        f
    }

    fn checksums_verify(f: &[u8]) -> bool {
        let ip = &f[14..];
        let header = usize::from(ip[0] & 0x0f) * 4;
        let header_ok = fold(sum16(0, &ip[..header])) == 0;
        let len = usize::from(u16::from_be_bytes([ip[header + 4], ip[header + 5]]));
        let pseudo = sum16(0, &ip[12..20]) + 17 + len as u32;
        let udp_ok = fold(sum16(pseudo, &ip[header..header + len])) == 0;
        header_ok && udp_ok
    }

    #[test]
    fn classify_frames() {
        let f = udp_frame(&[1; 100]);
        assert_eq!(
            classify(&f),
            Kind::Ip {
                udp_payload: Some(100),
                ip_bytes: 128
            }
        );
        let mut arp = vec![0u8; 42];
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(classify(&arp), Kind::Passthrough);
        assert_eq!(classify(&[0; 5]), Kind::Passthrough);
    }

    #[test]
    fn checksum_fix_fills_an_offloaded_checksum() {
        let mut f = udp_frame(b"hello, satellite");
        assert!(checksums_verify(&f));
        f[14 + 26] ^= 0x5a; // what an offloading sender leaves there
        assert!(!checksums_verify(&f));
        fix_udp_checksum(&mut f);
        assert!(checksums_verify(&f));
    }

    #[test]
    fn aqt_is_inserted_then_accumulated() {
        let mut f = udp_frame(&[7; 50]);
        f.extend_from_slice(&[0; 4]); // Ethernet padding
        add_aqt(&mut f, 1_500_000, 1500).unwrap();
        assert_eq!(f[14] & 0x0f, 7);
        assert_eq!(u16::from_be_bytes([f[16], f[17]]), 86);
        assert_eq!(f.len(), 14 + 86);
        assert_eq!(aqt::find_in_ip_options(&f[34..42]), Some(1_500));
        assert!(checksums_verify(&f));
        add_aqt(&mut f, 2_000_000, 1500).unwrap();
        assert_eq!(aqt::find_in_ip_options(&f[34..42]), Some(3_500));
        assert_eq!(f.len(), 14 + 86);
        assert!(checksums_verify(&f));
        assert_eq!(
            classify(&f),
            Kind::Ip {
                udp_payload: Some(50),
                ip_bytes: 86
            }
        );
        // The payload is where the UDP header says.
        assert_eq!(&f[14 + 28 + 8..], &[7; 50]);
    }

    #[test]
    fn gso_super_frames_are_cut_into_datagrams() {
        // Three datagrams of 1000, 1000 and 500 bytes in one super-frame.
        let payload: Vec<u8> = (0..2500u32).map(|i| (i % 251) as u8).collect();
        let mut big = udp_frame(&payload);
        // A GSO frame's length fields need not describe the whole; the
        // split must not depend on them.
        big[14 + 2..14 + 4].copy_from_slice(&0u16.to_be_bytes());
        let parts = split_udp_gso(&big, 1000);
        assert_eq!(parts.len(), 3);
        let mut joined = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            assert!(checksums_verify(p), "segment {i}");
            let want = if i < 2 { 1000 } else { 500 };
            assert_eq!(
                classify(p),
                Kind::Ip {
                    udp_payload: Some(want),
                    ip_bytes: 28 + want
                }
            );
            assert_eq!(u16::from_be_bytes([p[18], p[19]]), 1 + i as u16);
            joined.extend_from_slice(&p[42..]);
        }
        assert_eq!(joined, payload);
        // Not bigger than one segment, or not UDP: whole.
        let small = udp_frame(&[1; 100]);
        assert_eq!(split_udp_gso(&small, 1000), vec![small.clone()]);
        let mut arp = vec![0u8; 60];
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(split_udp_gso(&arp, 10).len(), 1);
    }

    #[test]
    fn aqt_refused_when_it_does_not_fit() {
        let mut f = udp_frame(&[0; 1472]);
        assert_eq!(add_aqt(&mut f, 1, 1500), Err(AqtError::TooBig));
        let mut arp = vec![0u8; 42];
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(add_aqt(&mut arp, 1, 1500), Err(AqtError::NotIpv4));
    }
}
