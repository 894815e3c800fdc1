//! TLS by rustls: webpki roots (plus private CAs from `--cacert`) for the
//! client, a self-signed certificate from rcgen for `tcpwise serve --tls`.

use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, pem::PemObject};
use std::sync::Arc;

/// Why a TLS configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// A `--cacert` file that is not PEM.
    #[error("bad certificate in --cacert")]
    Pem(#[source] rustls_pki_types::pem::Error),
    /// A `--cacert` file without a certificate.
    #[error("--cacert holds no PEM certificate")]
    NoCertificate,
    /// rustls refused the configuration or a certificate.
    #[error("TLS configuration")]
    Rustls(#[from] rustls::Error),
    /// The self-signed certificate could not be made.
    #[error("cannot make a certificate")]
    Certificate(#[from] rcgen::Error),
}

/// The TLS versions a client offers (rustls speaks 1.2 and 1.3; curl's
/// `--tlsv1.x` and `--tls-max` narrow them to one of these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TlsVersions {
    /// 1.2 and 1.3.
    #[default]
    Both,
    /// 1.2 only.
    Only12,
    /// 1.3 only.
    Only13,
}

impl TlsVersions {
    fn list(self) -> &'static [&'static rustls::SupportedProtocolVersion] {
        static ONLY12: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
        static ONLY13: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
        match self {
            TlsVersions::Both => rustls::DEFAULT_VERSIONS,
            TlsVersions::Only12 => &ONLY12,
            TlsVersions::Only13 => &ONLY13,
        }
    }
}

/// A client config trusting the webpki roots and the PEM certificates in `extra`.
pub fn client_config(extra: &[Vec<u8>]) -> Result<Arc<rustls::ClientConfig>, TlsSetupError> {
    client_config_with(extra, TlsVersions::Both)
}

/// [`client_config`] offering only `versions`.
pub fn client_config_with(
    extra: &[Vec<u8>],
    versions: TlsVersions,
) -> Result<Arc<rustls::ClientConfig>, TlsSetupError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for pem in extra {
        let mut n = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(TlsSetupError::Pem)?;
            roots.add(cert).map_err(TlsSetupError::Rustls)?;
            n += 1;
        }
        if n == 0 {
            return Err(TlsSetupError::NoCertificate);
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions.list())
        .map_err(TlsSetupError::Rustls)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

/// A self-signed certificate for `names`, as (server config, PEM certificate).
pub fn self_signed(names: &[String]) -> Result<(Arc<rustls::ServerConfig>, String), TlsSetupError> {
    self_signed_between(names, None)
}

/// A calendar date: year, month, day.
pub type Ymd = (i32, u8, u8);

/// As [`self_signed`], valid only between two dates: an expired
/// certificate for tests of clients.
pub fn self_signed_between(
    names: &[String],
    validity: Option<(Ymd, Ymd)>,
) -> Result<(Arc<rustls::ServerConfig>, String), TlsSetupError> {
    let key = rcgen::KeyPair::generate()?;
    let mut params = rcgen::CertificateParams::new(names.to_vec())?;
    if let Some(((y0, m0, d0), (y1, m1, d1))) = validity {
        params.not_before = rcgen::date_time_ymd(y0, m0, d0);
        params.not_after = rcgen::date_time_ymd(y1, m1, d1);
    }
    let cert = params.self_signed(&key)?;
    let pem = cert.pem();
    let der = CertificateDer::from(cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![der], key)?;
    // HTTP/2 for clients that offer it (curl --http2, browsers), HTTP/1.1
    // for the rest.
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok((with_resumption(&cfg, Resumption::default()), pem))
}

/// How a server resumes sessions: TLS 1.3 tickets per full handshake and
/// how much early data (0-RTT) a resumed client may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resumption {
    /// Tickets sent after a full handshake (0: no resumption). Each is
    /// single-use (rustls's session cache takes it), as RFC 8446 advises.
    pub tickets: usize,
    /// Early data accepted on a resumed session, bytes (0: none).
    pub early_data: u32,
}

impl Default for Resumption {
    /// Two tickets (rustls's and OpenSSL's default), no early data.
    fn default() -> Self {
        Resumption {
            tickets: 2,
            early_data: 0,
        }
    }
}

/// Sessions a server remembers for resumption (rustls's default is 256;
/// a load of fresh connections would evict each other's).
const SESSION_CACHE: usize = 16 * 1024;

/// `cfg` resuming sessions as `r` says. Early data comes with answers
/// before the handshake completes (`send_half_rtt_data`): 0-RTT saves a
/// round trip only if the answer to early data leaves at once (see
/// `tcpwise_server::zero_rtt`).
pub fn with_resumption(cfg: &rustls::ServerConfig, r: Resumption) -> Arc<rustls::ServerConfig> {
    let mut c = cfg.clone();
    c.send_tls13_tickets = r.tickets;
    c.session_storage = if r.tickets > 0 {
        rustls::server::ServerSessionMemoryCache::new(SESSION_CACHE)
    } else {
        Arc::new(rustls::server::NoServerSessionStorage {})
    };
    c.max_early_data_size = if r.tickets > 0 { r.early_data } else { 0 };
    c.send_half_rtt_data = c.max_early_data_size > 0;
    Arc::new(c)
}

/// A client config that accepts any server certificate (`--insecure`,
/// curl's `-k`): the connection is encrypted but the server unverified.
/// Signatures are still checked with the provider's algorithms, so a
/// broken handshake is still an error.
pub fn insecure_client_config() -> Result<Arc<rustls::ClientConfig>, TlsSetupError> {
    insecure_client_config_with(TlsVersions::Both)
}

/// [`insecure_client_config`] offering only `versions`.
pub fn insecure_client_config_with(
    versions: TlsVersions,
) -> Result<Arc<rustls::ClientConfig>, TlsSetupError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions.list())
        .map_err(TlsSetupError::Rustls)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCert(provider)))
        .with_no_client_auth();
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

#[derive(Debug)]
struct AnyCert(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &rustls_pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls_pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

impl tcpwise_outcome::Classify for TlsSetupError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        Some(tcpwise_outcome::Class::Usage)
    }
}
