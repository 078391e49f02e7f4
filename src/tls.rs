//! Server certificates: files given on the command line, or a self-signed
//! certificate for localhost made at start and kept in memory only.
//!
//! Either way the certificate and key reach BoringSSL from memory
//! ([`Identity::tls_context`], handed to
//! `quiche::Config::with_boring_ssl_ctx_builder`): nothing is ever written
//! to disk, so no other user can read or replace the key.

use std::io;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use boring::pkey::PKey;
use boring::ssl::{SslContextBuilder, SslMethod};
use boring::x509::X509;

/// A certificate chain and its private key, as PEM files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Names the self-signed certificate is valid for.
pub const SELF_SIGNED_NAMES: &[&str] = &["localhost", "127.0.0.1", "::1"];

/// A certificate chain and its private key, in memory (PEM).
pub struct Identity {
    cert_pem: Vec<u8>,
    key_pem: Vec<u8>,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        // Never print the key.
        write!(f, "Identity({} bytes of certificate)", self.cert_pem.len())
    }
}

impl Identity {
    /// A fresh self-signed certificate for [`SELF_SIGNED_NAMES`], made in
    /// memory.
    pub fn self_signed() -> anyhow::Result<Identity> {
        let names: Vec<String> = SELF_SIGNED_NAMES.iter().map(|n| n.to_string()).collect();
        let certified = rcgen::generate_simple_self_signed(names)
            .context("cannot generate a self-signed certificate")?;
        Ok(Identity {
            cert_pem: certified.cert.pem().into_bytes(),
            key_pem: certified.signing_key.serialize_pem().into_bytes(),
        })
    }

    /// Reads both files, with errors that name the file and say why
    /// (missing, permission denied, not a file, not PEM).
    pub fn from_files(files: &CertFiles) -> anyhow::Result<Identity> {
        let identity = Identity {
            cert_pem: read_pem_file(&files.cert, "certificate")?,
            key_pem: read_pem_file(&files.key, "private key")?,
        };
        // Parse now, so that a bad file is named.
        X509::stack_from_pem(&identity.cert_pem)
            .ok()
            .filter(|chain| !chain.is_empty())
            .with_context(|| {
                format!(
                    "{} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
                    files.cert.display()
                )
            })?;
        PKey::private_key_from_pem(&identity.key_pem)
            .map_err(|_| anyhow!("{} holds no PEM private key", files.key.display()))?;
        Ok(identity)
    }

    /// The certificate chain, PEM.
    pub fn cert_pem(&self) -> &[u8] {
        &self.cert_pem
    }

    /// A BoringSSL context serving this chain and key, for
    /// `quiche::Config::with_boring_ssl_ctx_builder`.
    pub fn tls_context(&self) -> anyhow::Result<SslContextBuilder> {
        let mut chain = X509::stack_from_pem(&self.cert_pem)
            .map_err(|e| anyhow!("invalid certificate: {e}"))?
            .into_iter();
        let leaf = chain.next().context("the certificate chain is empty")?;
        let key =
            PKey::private_key_from_pem(&self.key_pem).map_err(|e| anyhow!("invalid key: {e}"))?;
        let mut ctx = SslContextBuilder::new(SslMethod::tls())
            .map_err(|e| anyhow!("cannot create a TLS context: {e}"))?;
        ctx.set_certificate(&leaf)
            .map_err(|e| anyhow!("cannot use the certificate: {e}"))?;
        for cert in chain {
            ctx.add_extra_chain_cert(cert)
                .map_err(|e| anyhow!("cannot use an intermediate certificate: {e}"))?;
        }
        ctx.set_private_key(&key).map_err(|e| {
            anyhow!("cannot use the private key (it does not match the certificate?): {e}")
        })?;
        ctx.check_private_key()
            .map_err(|_| anyhow!("the private key does not match the certificate"))?;
        Ok(ctx)
    }
}

/// The bytes of a PEM file, with an error that names it and says why it
/// cannot be read.
fn read_pem_file(path: &Path, what: &str) -> anyhow::Result<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, what, &e))?;
    if !meta.is_file() {
        bail!("{what} {} is not a file", path.display());
    }
    std::fs::read(path).map_err(|e| io_error(path, what, &e))
}

/// `cannot read <what> <path>: permission denied` and the like.
pub fn io_error(path: &Path, what: &str, e: &io::Error) -> anyhow::Error {
    let why = match e.kind() {
        io::ErrorKind::NotFound => "does not exist".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    };
    anyhow!("cannot read {what} {}: {why}", path.display())
}

/// Loads the certificate chain and key files into `config`, with messages
/// that name the file at fault (for configurations made with
/// `quiche::Config::new`; the apps use [`Identity::tls_context`]).
pub fn load(config: &mut quiche::Config, files: &CertFiles) -> anyhow::Result<()> {
    // Reading them first gives the reason quiche would not (it says
    // `TlsFail`).
    Identity::from_files(files)?;
    let cert = path_str(&files.cert)?;
    let key = path_str(&files.key)?;
    config
        .load_cert_chain_from_pem_file(cert)
        .map_err(|e| anyhow!("cannot load certificate chain from {cert}: {e}"))?;
    config
        .load_priv_key_from_pem_file(key)
        .map_err(|e| anyhow!("cannot load private key from {key}: {e}"))?;
    Ok(())
}

fn path_str(path: &Path) -> anyhow::Result<&str> {
    path.to_str()
        .with_context(|| format!("path {} is not valid UTF-8", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_signed_builds_a_context() {
        let identity = Identity::self_signed().unwrap();
        identity.tls_context().unwrap();
        assert!(!format!("{identity:?}").contains("PRIVATE"));
    }

    #[test]
    fn missing_files_are_named() {
        let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        let files = CertFiles {
            cert: "/nonexistent/cert.pem".into(),
            key: "/nonexistent/key.pem".into(),
        };
        let e = load(&mut config, &files).unwrap_err().to_string();
        assert!(e.contains("/nonexistent/cert.pem: does not exist"), "{e}");
    }

    #[test]
    fn files_round_trip_and_garbage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let made = Identity::self_signed().unwrap();
        let files = CertFiles {
            cert: dir.path().join("c.pem"),
            key: dir.path().join("k.pem"),
        };
        std::fs::write(&files.cert, &made.cert_pem).unwrap();
        std::fs::write(&files.key, &made.key_pem).unwrap();
        let read = Identity::from_files(&files).unwrap();
        assert_eq!(read.cert_pem(), made.cert_pem());
        read.tls_context().unwrap();
        let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        load(&mut config, &files).unwrap();

        std::fs::write(&files.key, b"not a key").unwrap();
        let e = Identity::from_files(&files).unwrap_err().to_string();
        assert!(e.contains("k.pem holds no PEM private key"), "{e}");
        // A key that belongs to another certificate.
        let other = Identity::self_signed().unwrap();
        std::fs::write(&files.key, &other.key_pem).unwrap();
        let Err(e) = Identity::from_files(&files).unwrap().tls_context() else {
            panic!("a mismatched key was accepted");
        };
        let e = e.to_string();
        assert!(e.contains("does not match the certificate"), "{e}");
    }

    #[test]
    fn permission_denied_is_said() {
        let e = io::Error::from(io::ErrorKind::PermissionDenied);
        let text = io_error(Path::new("/k.pem"), "private key", &e).to_string();
        assert_eq!(text, "cannot read private key /k.pem: permission denied");
    }
}
