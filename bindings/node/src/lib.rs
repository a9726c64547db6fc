//! `require('rampart')`: the Node binding of rampart-core. Storage work runs on the libuv pool
//! (`AsyncTask`) and resolves a Promise; the pure TOTP and widget helpers are synchronous.

// napi-derive registers exports only outside `cfg(test)`, so `clippy --all-targets` would
// see every exported function as unused.
#![cfg_attr(test, allow(dead_code))]

mod convert;
mod errors;
mod service;
mod totp;
mod widget;

/// The binding's version (the workspace version).
#[napi_derive::napi]
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
