//! HTTP/3 client

mod connection;
mod stream;

mod builder;

pub use builder::builder;
pub use builder::new;
pub use builder::Builder;
pub use connection::{Connection, SendRequest};
pub use stream::RequestStream;
