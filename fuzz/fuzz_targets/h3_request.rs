//! The server's check of an HTTP/3 request header section (RFC 9114 section
//! 4.3.1) and the client's reading of `:status` and `content-length`, from
//! hostile bytes: never a panic; what is accepted is well-formed by an
//! independent count of the pseudo-headers.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../src/transfer/request.rs"]
#[allow(dead_code)]
mod request;

/// Splits `data` into (name, value) fields: each field is a length byte of
/// the name, the name, a length byte of the value, the value.
fn fields(data: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    let mut rest = data;
    while let Some((&n, r)) = rest.split_first() {
        let n = usize::from(n).min(r.len());
        let (name, r) = r.split_at(n);
        let Some((&v, r)) = r.split_first() else {
            out.push((name, &[][..]));
            break;
        };
        let v = usize::from(v).min(r.len());
        let (value, r) = r.split_at(v);
        out.push((name, value));
        rest = r;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let list = fields(data);
    let result = request::parse_h3_request(list.iter().copied());
    if let Ok(req) = &result {
        let count = |name: &[u8]| list.iter().filter(|(n, _)| *n == name).count();
        assert_eq!(count(b":method"), 1);
        for pseudo in [&b":scheme"[..], b":authority", b":path", b":protocol"] {
            assert!(count(pseudo) <= 1);
        }
        assert!(!list.iter().any(|(n, _)| n.iter().any(u8::is_ascii_uppercase)));
        // Every pseudo-header comes before every regular field.
        let first_regular = list.iter().position(|(n, _)| !n.starts_with(b":"));
        let last_pseudo = list.iter().rposition(|(n, _)| n.starts_with(b":"));
        if let (Some(r), Some(p)) = (first_regular, last_pseudo) {
            assert!(p < r);
        }
        if req.method != b"CONNECT" {
            let path = req.path.expect("a path");
            assert!(!path.is_empty());
            assert_eq!(count(b":scheme"), 1);
        }
    }
    for (_, value) in &list {
        if let Some(status) = request::parse_status(value) {
            assert!((100..=999).contains(&status));
            assert_eq!(status.to_string().as_bytes(), *value);
        }
        if let Some(length) = request::parse_content_length(value) {
            assert!(value.iter().all(u8::is_ascii_digit));
            let trimmed: &[u8] = {
                let zeros = value.iter().take_while(|&&b| b == b'0').count();
                if zeros == value.len() { b"0" } else { &value[zeros..] }
            };
            assert_eq!(length.to_string().as_bytes(), trimmed);
        }
    }
});
