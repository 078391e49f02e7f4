//! Server certificates: files given on the command line, or a self-signed
//! certificate for localhost made at start.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// A certificate chain and its private key, as PEM files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Names the self-signed certificate is valid for.
pub const SELF_SIGNED_NAMES: &[&str] = &["localhost", "127.0.0.1", "::1"];

/// Makes a self-signed certificate for localhost and writes it and its key
/// into a new directory under `parent`.
pub fn write_self_signed(parent: &Path) -> anyhow::Result<CertFiles> {
    let names: Vec<String> = SELF_SIGNED_NAMES.iter().map(|n| n.to_string()).collect();
    let certified = rcgen::generate_simple_self_signed(names)
        .context("cannot generate a self-signed certificate")?;
    let dir = parent.join(format!("quiche-vegas-cert-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create directory {}", dir.display()))?;
    let files = CertFiles {
        cert: dir.join("cert.pem"),
        key: dir.join("key.pem"),
    };
    std::fs::write(&files.cert, certified.cert.pem())
        .with_context(|| format!("cannot write {}", files.cert.display()))?;
    std::fs::write(&files.key, certified.signing_key.serialize_pem())
        .with_context(|| format!("cannot write {}", files.key.display()))?;
    Ok(files)
}

/// Loads the certificate chain and key into `config`, with messages that
/// name the file at fault.
pub fn load(config: &mut quiche::Config, files: &CertFiles) -> anyhow::Result<()> {
    for path in [&files.cert, &files.key] {
        if !path.is_file() {
            bail!("{} does not exist or is not a file", path.display());
        }
    }
    let cert = path_str(&files.cert)?;
    let key = path_str(&files.key)?;
    config
        .load_cert_chain_from_pem_file(cert)
        .map_err(|e| anyhow::anyhow!("cannot load certificate chain from {cert}: {e}"))?;
    config
        .load_priv_key_from_pem_file(key)
        .map_err(|e| anyhow::anyhow!("cannot load private key from {key}: {e}"))?;
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
    fn self_signed_loads() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_self_signed(dir.path()).unwrap();
        let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        load(&mut config, &files).unwrap();
    }

    #[test]
    fn missing_files_are_named() {
        let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        let files = CertFiles {
            cert: "/nonexistent/cert.pem".into(),
            key: "/nonexistent/key.pem".into(),
        };
        let e = load(&mut config, &files).unwrap_err().to_string();
        assert!(e.contains("/nonexistent/cert.pem"), "{e}");
    }
}
