//! Turning a [`Request`] into hyper's request and sending it on a
//! connection (HTTP/1.1 or HTTP/2), and the request head as curl's `-v`
//! prints it.

use super::*;

/// How requests reach a connection.
#[derive(Clone)]
pub(super) enum Sender {
    H1(Arc<tokio::sync::Mutex<http1::SendRequest<ReqBody>>>),
    H2(http2::SendRequest<ReqBody>),
}

impl Sender {
    pub(super) fn is_closed(&self) -> bool {
        match self {
            Sender::H1(s) => s.try_lock().map(|s| s.is_closed()).unwrap_or(false),
            Sender::H2(s) => s.is_closed(),
        }
    }
    pub(super) fn h2(&self) -> bool {
        matches!(self, Sender::H2(_))
    }
    pub(super) async fn send(
        &self,
        mut req: hyper::Request<ReqBody>,
    ) -> Result<hyper::Response<hyper::body::Incoming>, SendError> {
        match self {
            Sender::H1(s) => {
                // An idle connection whose last body just ended may not be
                // marked ready yet: wait for it (an error if it closed).
                let mut s = s.lock().await;
                s.ready().await?;
                // hyper reads 1xx responses and waits for the next: count
                // their bytes, and stop past the limit (endless 100
                // Continue lines were read until -m).
                let heads = Arc::new(Informational::default());
                let seen = heads.clone();
                hyper::ext::on_informational(&mut req, move |r| seen.add(r.headers()));
                tokio::select! {
                    r = s.send_request(req) => Ok(r?),
                    () = heads.over.notified() => Err(SendError::HeadersTooLarge {
                        bytes: heads.bytes.load(std::sync::atomic::Ordering::Relaxed),
                        informational: heads.count.load(std::sync::atomic::Ordering::Relaxed),
                    }),
                }
            }
            Sender::H2(s) => {
                let mut s = s.clone();
                s.ready().await?;
                Ok(s.send_request(req).await?)
            }
        }
    }
}

/// The most bytes of 1xx response heads `get` reads before the final
/// response: curl 8.3's total for a response's headers
/// (`MAX_HTTP_RESP_HEADER_SIZE`, 300 KiB, 1xx heads counted); curl 7.88
/// had no such limit.
pub const MAX_INFORMATIONAL_BYTES: usize = 300 * 1024;

/// Why a request got no response.
#[derive(Debug)]
pub(super) enum SendError {
    /// hyper's error.
    Hyper(hyper::Error),
    /// 1xx heads past [`MAX_INFORMATIONAL_BYTES`].
    HeadersTooLarge {
        /// Their bytes.
        bytes: usize,
        /// Their number.
        informational: usize,
    },
}

impl From<hyper::Error> for SendError {
    fn from(e: hyper::Error) -> SendError {
        SendError::Hyper(e)
    }
}

/// The 1xx heads of one request so far.
#[derive(Default)]
struct Informational {
    bytes: std::sync::atomic::AtomicUsize,
    count: std::sync::atomic::AtomicUsize,
    over: tokio::sync::Notify,
}

impl Informational {
    /// One more head: its status line and headers as they came, about.
    fn add(&self, headers: &hyper::HeaderMap) {
        use std::sync::atomic::Ordering::Relaxed;
        let head: usize = 17
            + headers
                .iter()
                .map(|(k, v)| k.as_str().len() + v.len() + 4)
                .sum::<usize>()
            + 2;
        self.count.fetch_add(1, Relaxed);
        if self.bytes.fetch_add(head, Relaxed) + head > MAX_INFORMATIONAL_BYTES {
            self.over.notify_one();
        }
    }
}

/// Header names as curl and hyper's `title_case_headers` write them.
pub(super) fn title_case(name: &str) -> String {
    let mut up = true;
    name.chars()
        .map(|c| {
            let o = if up { c.to_ascii_uppercase() } else { c };
            up = c == '-';
            o
        })
        .collect()
}

/// The request head as it goes out, for `-v` and `%{size_request}`:
/// HTTP/1.1 text with hyper's title case; HTTP/2 written as curl shows it.
pub(super) fn request_head(r: &hyper::Request<ReqBody>, h2: bool) -> String {
    let mut out = if h2 {
        let uri = r.uri();
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let mut s = format!("{} {path} HTTP/2\r\n", r.method());
        if let Some(a) = uri.authority() {
            s.push_str(&format!("Host: {a}\r\n"));
        }
        s
    } else {
        format!("{} {} HTTP/1.1\r\n", r.method(), r.uri())
    };
    for (k, v) in r.headers() {
        let name = if h2 {
            k.as_str().to_string()
        } else {
            title_case(k.as_str())
        };
        out.push_str(&format!(
            "{name}: {}\r\n",
            String::from_utf8_lossy(v.as_bytes())
        ));
    }
    out.push_str("\r\n");
    out
}

impl Client {
    pub(super) fn build(
        &self,
        req: &Request,
        origin: &Origin,
        h2: bool,
    ) -> Result<hyper::Request<ReqBody>, HttpError> {
        let path = match (&req.target, req.url.query()) {
            (Some(t), _) => t.clone(),
            (None, Some(q)) => format!("{}?{q}", req.url.path()),
            (None, None) => req.url.path().to_string(),
        };
        let default_port = if origin.scheme == "https" { 443 } else { 80 };
        let host = if origin.port == default_port {
            req.url.host_str().unwrap_or_default().to_string()
        } else {
            format!("{}:{}", req.url.host_str().unwrap_or_default(), origin.port)
        };
        let proxied = origin.via.is_some() && origin.scheme == "http";
        let uri = if h2 {
            format!("{}://{host}{path}", origin.scheme)
        } else if proxied {
            format!("http://{host}{path}")
        } else {
            path
        };
        let mut b = hyper::Request::builder()
            .method(req.method.clone())
            .uri(uri);
        if h2 {
            b = b.version(hyper::Version::HTTP_2);
        } else if self.inner.cfg.version == Version::Http10 {
            b = b.version(hyper::Version::HTTP_10);
        }
        let has = |n: &str| req.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
        if !has("host") && !h2 {
            b = b.header("host", host);
        }
        if proxied && let Some(auth) = origin.via.as_ref().and_then(|p| p.auth.as_deref()) {
            b = b.header("proxy-authorization", auth);
        }
        // curl's order: Host, User-Agent (ours or the one given), Accept,
        // then the rest as given.
        let ua = req
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("user-agent"));
        match ua {
            None => b = b.header("user-agent", concat!("tcpwise/", env!("CARGO_PKG_VERSION"))),
            Some((k, v)) if v != crate::REMOVE => b = b.header(k.as_str(), v.as_str()),
            Some(_) => {}
        }
        if !has("accept") {
            b = b.header("accept", "*/*");
        }
        for (k, v) in &req.headers {
            if k.eq_ignore_ascii_case("user-agent") {
                continue;
            }
            // REMOVE removes the header, as curl's `-H 'Name:'`.
            if v != crate::REMOVE {
                b = b.header(k.as_str(), v.as_str());
            }
        }
        let sends_body = !req.body.is_empty()
            || matches!(
                req.method,
                hyper::Method::POST | hyper::Method::PUT | hyper::Method::PATCH
            );
        // Standard input has no length: chunked on HTTP/1.1, as curl.
        if sends_body
            && !has("content-length")
            && let Some(n) = req.body.len()
        {
            b = b.header("content-length", n);
        }
        b.body(req.body.body()?)
            .map_err(|e| HttpError::url(&req.url, format!("bad request header: {e}")))
    }
}
