//! The `tcpwise` binary's integration tests, one test binary with a
//! module per command or concern (ripgrep's `tests/tests.rs`): one link
//! of the workspace instead of one per file. `common` holds the helpers
//! (the binary's path, the skip-or-require rules for namespaces and
//! peers); `architecture` and `generated` read the tree, not the binary.
//! One module's tests: `cargo test -p tcpwise --test tests emu::`.

mod common;

mod aio;
mod architecture;
mod bench;
mod cold_start;
mod curl_diff;
mod curl_options;
mod dispatch;
mod dumbbell;
mod emu;
mod examples;
mod faults;
mod first_contact;
mod generated;
mod h3;
mod hostile;
mod http;
mod lab;
mod offload;
mod options;
mod perf;
mod rpm;
mod sweep;
mod testbeds;
