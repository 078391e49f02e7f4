//! Parsers of what arrives from the network in requests and responses:
//! HTTP/3 request header sections (RFC 9114 section 4.3.1), hq-interop
//! request lines, percent-encoded paths, and the `:status` and
//! `content-length` of responses.
//!
//! Pure functions on bytes with no dependency beyond `std`, so that the
//! fuzz targets in `fuzz/` include this file as it is.

/// A well-formed HTTP/3 request's pseudo-headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct H3Request<'a> {
    pub method: &'a [u8],
    /// `:path`, UTF-8; present for every method but CONNECT.
    pub path: Option<&'a str>,
}

/// Why a request header section is malformed (RFC 9114 section 4.1.2): the
/// stream gets H3_MESSAGE_ERROR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// A pseudo-header appears twice.
    Duplicate(String),
    /// A required pseudo-header is missing.
    Missing(&'static str),
    /// A pseudo-header that requests do not have (e.g. `:status`).
    Unknown(String),
    /// A pseudo-header after a regular header field.
    PseudoAfterRegular(String),
    /// A pseudo-header's value is not allowed (empty `:path`, non-UTF-8).
    BadValue(&'static str),
    /// An uppercase or otherwise invalid field name.
    BadName,
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Malformed::Duplicate(n) => write!(f, "duplicate pseudo-header {n}"),
            Malformed::Missing(n) => write!(f, "missing pseudo-header {n}"),
            Malformed::Unknown(n) => write!(f, "pseudo-header {n} not allowed in a request"),
            Malformed::PseudoAfterRegular(n) => {
                write!(f, "pseudo-header {n} after a regular header")
            }
            Malformed::BadValue(n) => write!(f, "invalid value of {n}"),
            Malformed::BadName => f.write_str("invalid header field name"),
        }
    }
}

const REQUEST_PSEUDO: [&str; 5] = [":method", ":scheme", ":authority", ":path", ":protocol"];

/// Checks an HTTP/3 request's header section, given as (name, value) pairs
/// in order, per RFC 9114 section 4.3.1: each pseudo-header at most once,
/// before every regular field, only the request ones; `:method` always;
/// `:scheme` and a non-empty `:path` unless the method is CONNECT; field
/// names lowercase.
pub fn parse_h3_request<'a, I>(headers: I) -> Result<H3Request<'a>, Malformed>
where
    I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
{
    let mut seen: [Option<&'a [u8]>; 5] = [None; 5];
    let mut regular_seen = false;
    for (name, value) in headers {
        if name.is_empty() || name.iter().any(|b| b.is_ascii_uppercase()) {
            return Err(Malformed::BadName);
        }
        if name[0] != b':' {
            regular_seen = true;
            continue;
        }
        let text = String::from_utf8_lossy(name).into_owned();
        let Some(index) = REQUEST_PSEUDO.iter().position(|p| p.as_bytes() == name) else {
            return Err(Malformed::Unknown(text));
        };
        if regular_seen {
            return Err(Malformed::PseudoAfterRegular(text));
        }
        if seen[index].replace(value).is_some() {
            return Err(Malformed::Duplicate(text));
        }
    }
    let [method, scheme, _authority, path, _protocol] = seen;
    let method = method.ok_or(Malformed::Missing(":method"))?;
    if method.is_empty() {
        return Err(Malformed::BadValue(":method"));
    }
    if method == b"CONNECT" {
        return Ok(H3Request { method, path: None });
    }
    scheme.ok_or(Malformed::Missing(":scheme"))?;
    let path = path.ok_or(Malformed::Missing(":path"))?;
    if path.is_empty() {
        return Err(Malformed::BadValue(":path"));
    }
    let path = std::str::from_utf8(path).map_err(|_| Malformed::BadValue(":path"))?;
    Ok(H3Request {
        method,
        path: Some(path),
    })
}

/// `GET /path` (HTTP/0.9 request line, `\r` tolerated) → `/path`.
pub fn parse_hq_request(line: &[u8]) -> Option<String> {
    let line = std::str::from_utf8(line).ok()?.trim_end_matches('\r');
    let mut words = line.split_ascii_whitespace();
    let (method, path) = (words.next()?, words.next()?);
    (method == "GET" && path.starts_with('/')).then(|| path.to_string())
}

/// Decodes `%XX` escapes; `None` if an escape is malformed or the result is
/// not UTF-8.
pub fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_string());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The segments of a request path (before `?`/`#`, percent-decoded) that
/// name a file under a root: `None` if the path does not start with `/`,
/// has a `..` segment, a NUL or backslash, a bad escape, or (unless
/// `dotfiles`) a segment starting with `.`. Empty and `.` segments are
/// skipped.
pub fn path_segments(path: &str, dotfiles: bool) -> Option<Vec<String>> {
    let path = path.split(['?', '#']).next().unwrap_or("");
    let path = percent_decode(path)?;
    if !path.starts_with('/') {
        return None;
    }
    let mut segments = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => continue,
            ".." => return None,
            s if s.contains(['\0', '\\']) => return None,
            s if s.starts_with('.') && !dotfiles => return None,
            s => segments.push(s.to_string()),
        }
    }
    Some(segments)
}

/// A response's `:status`: exactly three digits, 100 to 999.
pub fn parse_status(value: &[u8]) -> Option<u16> {
    if value.len() != 3 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let status = std::str::from_utf8(value).ok()?.parse().ok()?;
    (100..=999).contains(&status).then_some(status)
}

/// A `content-length` value: decimal digits only, no sign, no spaces.
pub fn parse_content_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h3(pairs: &[(&'static str, &'static str)]) -> Result<H3Request<'static>, Malformed> {
        parse_h3_request(pairs.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())))
    }

    const GOOD: &[(&str, &str)] = &[
        (":method", "GET"),
        (":scheme", "https"),
        (":authority", "h"),
        (":path", "/f"),
        ("user-agent", "x"),
    ];

    #[test]
    fn well_formed_requests() {
        assert_eq!(
            h3(GOOD),
            Ok(H3Request {
                method: b"GET",
                path: Some("/f")
            })
        );
        // :authority is optional; CONNECT needs neither :scheme nor :path.
        assert!(h3(&[(":method", "HEAD"), (":scheme", "https"), (":path", "/")]).is_ok());
        assert_eq!(
            h3(&[(":method", "CONNECT"), (":authority", "h")]).map(|r| r.path),
            Ok(None)
        );
    }

    #[test]
    fn malformed_requests() {
        // Every pseudo-header of GOOD twice, in turn.
        for (i, field) in GOOD.iter().enumerate().take(4) {
            let mut v = GOOD.to_vec();
            v.insert(i, *field);
            assert_eq!(
                h3(&v),
                Err(Malformed::Duplicate(field.0.to_string())),
                "{v:?}"
            );
        }
        // Every required one missing, in turn.
        for (i, name) in [(0, ":method"), (1, ":scheme"), (3, ":path")] {
            let mut v = GOOD.to_vec();
            v.remove(i);
            assert_eq!(h3(&v), Err(Malformed::Missing(name)), "{v:?}");
        }
        let mut v = GOOD.to_vec();
        v.insert(1, ("accept", "*/*"));
        assert_eq!(h3(&v), Err(Malformed::PseudoAfterRegular(":scheme".into())));
        let mut v = GOOD.to_vec();
        v.push((":status", "200"));
        assert_eq!(h3(&v), Err(Malformed::Unknown(":status".into())));
        let mut v = GOOD.to_vec();
        v[3] = (":path", "");
        assert_eq!(h3(&v), Err(Malformed::BadValue(":path")));
        let mut v = GOOD.to_vec();
        v.push(("User-Agent", "x"));
        assert_eq!(h3(&v), Err(Malformed::BadName));
        assert_eq!(h3(&[]), Err(Malformed::Missing(":method")));
        assert!(parse_h3_request([
            (&b":method"[..], &b"GET"[..]),
            (b":scheme", b"h"),
            (b":path", b"/\xff")
        ])
        .is_err());
    }

    #[test]
    fn hq_request_lines() {
        assert_eq!(parse_hq_request(b"GET /file\r"), Some("/file".into()));
        assert_eq!(parse_hq_request(b"GET /a/b"), Some("/a/b".into()));
        assert_eq!(parse_hq_request(b"GET /x HTTP/1.0"), Some("/x".into()));
        assert_eq!(parse_hq_request(b"POST /file"), None);
        assert_eq!(parse_hq_request(b"GET file"), None);
        assert_eq!(parse_hq_request(b"GET"), None);
        assert_eq!(parse_hq_request(b"\xff\xfe"), None);
    }

    #[test]
    fn segments() {
        let s = |p, d| path_segments(p, d);
        assert_eq!(
            s("/a/b%20c?x#y", false),
            Some(vec!["a".into(), "b c".into()])
        );
        assert_eq!(s("//./a", false), Some(vec!["a".into()]));
        assert_eq!(s("/.hidden", false), None);
        assert_eq!(s("/%2ehidden", false), None);
        assert_eq!(s("/d/.git/config", false), None);
        assert_eq!(s("/.hidden", true), Some(vec![".hidden".into()]));
        assert_eq!(s("/../x", true), None);
        assert_eq!(s("/%2e%2e/x", true), None);
        assert_eq!(s("x", true), None);
        assert_eq!(s("/a%zz", true), None);
        assert_eq!(s("/a%+1", true), None);
        assert_eq!(s("/a%00", true), None);
        assert_eq!(s("/a\\b", true), None);
    }

    #[test]
    fn response_fields() {
        assert_eq!(parse_status(b"200"), Some(200));
        assert_eq!(parse_status(b"099"), None);
        assert_eq!(parse_status(b"+20"), None);
        assert_eq!(parse_status(b"2000"), None);
        assert_eq!(parse_content_length(b"1000000"), Some(1_000_000));
        assert_eq!(parse_content_length(b"+1"), None);
        assert_eq!(parse_content_length(b" 1"), None);
        assert_eq!(parse_content_length(b""), None);
        assert_eq!(parse_content_length(b"99999999999999999999999"), None);
    }
}
