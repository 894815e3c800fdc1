//! The server's config (network-quality/server's `SERVER_SPEC.md`): JSON
//! naming the small object, the large object and the upload sink. Both
//! spellings of the keys are read: the spec's (`small_download_url`) and
//! Apple's and goresponsiveness's (`small_https_download_url`).

use crate::RpmError;
use serde::Serialize;
use url::Url;

/// The three URLs a test uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Endpoints {
    /// The 1-byte object the probes fetch.
    pub small: Url,
    /// The large object the download load fetches.
    pub large: Url,
    /// Where the upload load sends.
    pub upload: Url,
}

/// Where the config is: the URL as given when it has a path, else its
/// origin's `/.well-known/nq`; without a scheme, https (the spec's TLS).
pub fn config_url(given: &str) -> Result<Url, RpmError> {
    let with_scheme = if given.contains("://") {
        given.to_string()
    } else {
        format!("https://{given}")
    };
    let bad = |why: &dyn std::fmt::Display| RpmError::Usage(format!("bad URL '{given}': {why}"));
    let mut url = Url::parse(&with_scheme).map_err(|e| bad(&e))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad(&"only http:// and https:// are supported"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad(&"no host"));
    }
    if url.path() == "/" && url.query().is_none() {
        url.set_path("/.well-known/nq");
    }
    Ok(url)
}

/// What is wrong with a config body (the server's answer, not the
/// user's words).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The body does not parse.
    #[error("not JSON ({0})")]
    NotJson(serde_json::Error),
    /// It has no `urls` object.
    #[error("no \"urls\" object")]
    NoUrls,
    /// A URL the test needs is missing, in both spellings.
    #[error("no \"{spec}\" (or \"{apple}\") in \"urls\"")]
    Missing {
        /// The draft's key.
        spec: &'static str,
        /// Apple's.
        apple: &'static str,
    },
    /// A URL is not absolute http(s).
    #[error("\"{spec}\" must be an absolute http(s) URL, not '{given}'")]
    NotAbsolute {
        /// The draft's key.
        spec: &'static str,
        /// What the body said.
        given: String,
    },
}

/// Reads a config body; the error says which key is missing or wrong.
pub fn parse(body: &[u8]) -> Result<Endpoints, ConfigError> {
    let v: serde_json::Value = serde_json::from_slice(body).map_err(ConfigError::NotJson)?;
    let urls = v
        .get("urls")
        .and_then(|u| u.as_object())
        .ok_or(ConfigError::NoUrls)?;
    let get = |spec: &'static str, apple: &'static str| -> Result<Url, ConfigError> {
        let s = urls
            .get(spec)
            .or_else(|| urls.get(apple))
            .and_then(|s| s.as_str())
            .ok_or(ConfigError::Missing { spec, apple })?;
        match Url::parse(s) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(u),
            _ => Err(ConfigError::NotAbsolute {
                spec,
                given: s.to_string(),
            }),
        }
    };
    Ok(Endpoints {
        small: get("small_download_url", "small_https_download_url")?,
        large: get("large_download_url", "large_https_download_url")?,
        upload: get("upload_url", "https_upload_url")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_urls() {
        let u = |s| config_url(s).map(|u| u.to_string());
        assert_eq!(u("h:8443").unwrap(), "https://h:8443/.well-known/nq");
        assert_eq!(u("http://h").unwrap(), "http://h/.well-known/nq");
        assert_eq!(
            u("https://h/api/v1/config").unwrap(),
            "https://h/api/v1/config"
        );
        assert!(u("ftp://h").is_err());
        assert!(u("http://").is_err());
    }

    #[test]
    fn both_spellings_and_clear_errors() {
        let spec = br#"{"version":1,"urls":{"small_download_url":"https://a/s","large_download_url":"https://a/l","upload_url":"https://a/u"}}"#;
        let apple = br#"{"version":1,"urls":{"small_https_download_url":"https://a/s","large_https_download_url":"https://a/l","https_upload_url":"https://a/u"}}"#;
        let a = parse(spec).expect("spec");
        assert_eq!(a, parse(apple).expect("apple"));
        assert_eq!(a.upload.as_str(), "https://a/u");
        let e = parse(br#"{"urls":{"small_download_url":"https://a/s","large_download_url":"/l","upload_url":"https://a/u"}}"#).unwrap_err().to_string();
        assert!(e.contains("large_download_url"), "{e}");
        assert!(
            parse(b"<html>")
                .unwrap_err()
                .to_string()
                .starts_with("not JSON")
        );
        assert!(
            parse(br#"{"version":1}"#)
                .unwrap_err()
                .to_string()
                .contains("urls")
        );
        let e = parse(
            br#"{"urls":{"small_download_url":"https://a/s","large_download_url":"https://a/l"}}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("upload_url"), "{e}");
    }
}
