//! `rampart._rampart`: the Python binding of rampart-core. The public face is the `rampart`
//! package (`python/rampart/`), which re-exports everything here and holds the exception
//! classes and the type stubs.

mod audit;
mod checkout;
mod convert;
mod errors;
mod recovery;
mod service;
mod totp;
mod webhooks;
mod widget;

use pyo3::prelude::*;

#[pymodule]
fn _rampart(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    service::register(m)?;
    recovery::register(m)?;
    checkout::register(m)?;
    audit::register(m)?;
    totp::register(m)?;
    webhooks::register(m)?;
    widget::register(m)?;
    Ok(())
}
