//! curl's rules for turning command-line words into requests, so `tcpwise
//! get` behaves like the curl its users know: a URL without a scheme is
//! `http://`; `-d` makes a POST with a form content type unless one is
//! given, `@FILE` reads the body from a file; `-I` is HEAD; `-O` names the
//! file after the URL's last path segment.

use crate::{Header, Request};
use bytes::Bytes;
use std::path::PathBuf;
use url::Url;

/// Why the words do not make a request (curl's exit 2 or 3).
#[derive(Debug, thiserror::Error)]
pub enum CurlError {
    /// Not a URL, or not http/https.
    #[error("'{url}' is not an http:// or https:// URL{why}")]
    Url {
        /// As given.
        url: String,
        /// The parser's complaint, if any.
        why: String,
    },
    /// `-X` with something that is not a method.
    #[error("'{0}' is not an HTTP method")]
    Method(String),
    /// `-d @FILE` that cannot be read.
    #[error("cannot read {path}")]
    Data {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The request-shaping flags of `tcpwise get`.
#[derive(Debug, Clone, Default)]
pub struct CurlArgs {
    /// `-X`.
    pub method: Option<String>,
    /// `-I`.
    pub head: bool,
    /// `-d`, `@FILE` for a file.
    pub data: Option<String>,
    /// `-H`, in order.
    pub headers: Vec<Header>,
}

impl CurlArgs {
    /// The request for `url` as curl would send it.
    pub fn request(&self, url: &str) -> Result<Request, CurlError> {
        let with_scheme = if url.contains("://") {
            url.to_string()
        } else {
            format!("http://{url}")
        };
        let bad = |why: String| CurlError::Url {
            url: url.to_string(),
            why,
        };
        let parsed = Url::parse(&with_scheme).map_err(|e| bad(format!(": {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(bad(String::new()));
        }
        let method = match (&self.method, self.head, self.data.is_some()) {
            (Some(m), _, _) => {
                hyper::Method::from_bytes(m.as_bytes()).map_err(|_| CurlError::Method(m.clone()))?
            }
            (None, true, _) => hyper::Method::HEAD,
            (None, false, true) => hyper::Method::POST,
            (None, false, false) => hyper::Method::GET,
        };
        let mut headers: Vec<(String, String)> = self
            .headers
            .iter()
            .map(|h| (h.0.clone(), h.1.clone()))
            .collect();
        let has_type = headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
        if self.data.is_some() && !has_type {
            let form = "application/x-www-form-urlencoded";
            headers.push(("content-type".into(), form.into()));
        }
        Ok(Request {
            method,
            url: parsed,
            headers,
            body: self.body()?,
        })
    }

    fn body(&self) -> Result<Bytes, CurlError> {
        Ok(match self.data.as_deref() {
            None => Bytes::new(),
            Some(d) => match d.strip_prefix('@') {
                Some(path) => std::fs::read(path)
                    .map_err(|source| CurlError::Data {
                        path: path.to_string(),
                        source,
                    })?
                    .into(),
                None => Bytes::copy_from_slice(d.as_bytes()),
            },
        })
    }
}

/// The file `-O` writes `url` to: its last path segment, or `index.html`.
pub fn remote_name(url: &Url) -> PathBuf {
    let name = url.path_segments().and_then(|mut s| s.next_back());
    PathBuf::from(name.filter(|s| !s.is_empty()).unwrap_or("index.html"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_curl_does() {
        let a = CurlArgs::default();
        let r = a.request("127.0.0.1:8080/x").unwrap();
        assert_eq!(r.url.as_str(), "http://127.0.0.1:8080/x");
        assert_eq!(r.method, hyper::Method::GET);
        assert!(a.request("ftp://h/").is_err());
        let d = CurlArgs {
            data: Some("a=1".into()),
            ..CurlArgs::default()
        };
        let r = d.request("http://h/").unwrap();
        assert_eq!(r.method, hyper::Method::POST);
        assert_eq!(r.headers[0].1, "application/x-www-form-urlencoded");
        assert_eq!(remote_name(&r.url), PathBuf::from("index.html"));
        let u = Url::parse("http://h/dir/file.bin").unwrap();
        assert_eq!(remote_name(&u), PathBuf::from("file.bin"));
    }
}
