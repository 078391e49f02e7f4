//! The simulated servers' TLS certificate: a fixed, test-only RSA-2048
//! certificate and key shipped in `interop/sim/certs/`.
//!
//! A run must produce the same packet sizes every time, so the certificate
//! must be the same bytes and the handshake signature the same length.
//! - Generated at start, a certificate would differ run to run (key, serial,
//!   dates): hence a fixed one, made once with `openssl req -x509 -newkey
//!   rsa:2048 -set_serial 1 -subj /CN=localhost`.
//! - ECDSA signatures are DER-encoded integers whose length varies by a byte
//!   or two with the random nonce, changing the server's handshake flight.
//! - Ed25519 signatures are always 64 bytes, but BoringSSL clients do not
//!   offer Ed25519 unless told to, which quiche's configuration cannot do:
//!   the handshake fails with `handshake_failure`.
//! - RSA-PSS (what TLS 1.3 signs with) is randomised but always as long as
//!   the modulus, 256 bytes.
//!
//! The key secures nothing: the traffic never leaves the process.

use std::path::Path;

use anyhow::Context;
use quiche_vegas::tls::CertFiles;

const CERTIFICATE_PEM: &str = include_str!("../certs/sim-cert.pem");
const KEY_PEM: &str = include_str!("../certs/sim-key.pem");

/// Server name in the certificate, and the one clients ask for.
pub const SERVER_NAME: &str = "localhost";

/// Writes the certificate and key into `dir` for quiche, which loads them
/// from files.
pub fn write_certificate(dir: &Path) -> anyhow::Result<CertFiles> {
    let files = CertFiles {
        cert: dir.join("sim-cert.pem"),
        key: dir.join("sim-key.pem"),
    };
    std::fs::write(&files.cert, CERTIFICATE_PEM)
        .with_context(|| format!("cannot write {}", files.cert.display()))?;
    std::fs::write(&files.key, KEY_PEM)
        .with_context(|| format!("cannot write {}", files.key.display()))?;
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_loads() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_certificate(dir.path()).unwrap();
        let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        quiche_vegas::tls::load(&mut config, &files).unwrap();
    }
}
