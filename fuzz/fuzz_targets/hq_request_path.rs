//! An hq-interop request line and the request path the file server maps to
//! a file, from hostile bytes: never a panic; no segment it yields can
//! climb out of the root or name a hidden file unless asked.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../src/transfer/request.rs"]
#[allow(dead_code)]
mod request;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, line)) = data.split_first() else {
        return;
    };
    let dotfiles = flags & 1 == 1;
    let path = match request::parse_hq_request(line) {
        Some(path) => {
            assert!(path.starts_with('/'));
            assert!(!path.contains(|c: char| c.is_ascii_whitespace()));
            path
        }
        // Not a request line: try the bytes as an HTTP/3 :path.
        None => match std::str::from_utf8(line) {
            Ok(s) => s.to_string(),
            Err(_) => return,
        },
    };
    let Some(segments) = request::path_segments(&path, dotfiles) else {
        return;
    };
    for s in &segments {
        assert!(!s.is_empty() && s != "." && s != "..", "{s:?}");
        assert!(!s.contains(['/', '\0', '\\']), "{s:?}");
        if !dotfiles {
            assert!(!s.starts_with('.'), "{s:?}");
        }
    }
    // Decoding agrees with an independent decoder.
    let raw = path.split(['?', '#']).next().unwrap_or("");
    if let Some(decoded) = request::percent_decode(raw) {
        let mut bytes = Vec::new();
        let b = raw.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).expect("checked by percent_decode");
                bytes.push(u8::from_str_radix(hex, 16).expect("checked"));
                i += 3;
            } else {
                bytes.push(b[i]);
                i += 1;
            }
        }
        assert_eq!(decoded.as_bytes(), &bytes[..]);
    }
});
