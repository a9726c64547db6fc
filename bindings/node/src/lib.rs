//! `require('rampart')`: the Node binding of rampart-core. Storage work runs on the libuv pool
//! (`AsyncTask`) and resolves a Promise; the pure TOTP, widget and webhook helpers are synchronous.

// napi-derive registers exports only outside `cfg(test)`, so `clippy --all-targets` would
// see every exported function as unused.
#![cfg_attr(test, allow(dead_code))]

mod audit;
mod checkout;
mod convert;
mod errors;
mod recovery;
mod service;
mod totp;
mod webhooks;
mod widget;

/// Runs once per Node environment, before `main.js` adds `RampartError` to these exports.
#[napi_derive::napi(module_exports)]
pub fn init(exports: napi::bindgen_prelude::Object, env: napi::Env) -> napi::Result<()> {
    errors::remember_exports(&env, &exports)
}

/// The binding's version (the workspace version).
#[napi_derive::napi]
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
