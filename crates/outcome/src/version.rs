//! The one version string every report carries (`--version`, each JSON
//! report, the lab's `results.json`): the binary's, with the commit it
//! was built from, set once at start-up by the binary (whose build script
//! knows the commit); a library used on its own reports its package
//! version.

use std::sync::OnceLock;

static VERSION: OnceLock<&'static str> = OnceLock::new();

/// Sets the version string (the first call wins).
pub fn set_version(v: &'static str) {
    let _ = VERSION.set(v);
}

/// The version string: what [`set_version`] set, or the package version.
pub fn version() -> &'static str {
    VERSION.get().copied().unwrap_or(env!("CARGO_PKG_VERSION"))
}
