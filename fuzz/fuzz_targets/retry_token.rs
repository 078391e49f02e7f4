//! Retry address-validation tokens: arbitrary bytes never validate (nor
//! panic) unless minted by us for that address and connection ID; minted
//! ones validate and give back the original connection ID.
#![no_main]

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use libfuzzer_sys::fuzz_target;

#[path = "../../src/retry.rs"]
#[allow(dead_code)]
mod retry;

const NOW: u64 = 1_800_000_000;

fuzz_target!(|data: &[u8]| {
    if data.len() < 20 {
        return;
    }
    let key = retry::TokenKey::from_bytes([0x42; 32]);
    let (head, rest) = data.split_at(20);
    let ip = IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(&head[..16]).expect("16")));
    let peer = SocketAddr::new(ip, u16::from_be_bytes([head[16], head[17]]));
    let cid_len = usize::from(head[18] % 21).min(rest.len());
    let (cid, token) = rest.split_at(cid_len);
    let age = u64::from(head[19]);

    // Hostile bytes as a token.
    if let Some(odcid) = key.validate(token, peer, cid, NOW) {
        // Only possible if the bytes are exactly what we would mint.
        let issued = u64::from_be_bytes(token[1..9].try_into().expect("8"));
        assert_eq!(key.mint(peer, &odcid, cid, issued), token);
    }
    // A token of ours, for these bytes as the original connection ID.
    let odcid = &token[..token.len().min(20)];
    let minted = key.mint(peer, odcid, cid, NOW - age);
    let valid = key.validate(&minted, peer, cid, NOW);
    if age <= retry::TOKEN_LIFETIME_SECS {
        assert_eq!(valid.as_deref(), Some(odcid));
    } else {
        assert_eq!(valid, None);
    }
    let mut other = peer;
    other.set_port(peer.port().wrapping_add(1));
    assert_eq!(key.validate(&minted, other, cid, NOW), None);
});
