//! One conversion from the core's errors to JavaScript: an `Error` whose `message` is the fixed
//! message, `code` the HTTP-style number and `kind` the stable name (two 401s share a code).

use napi::bindgen_prelude::*;
use napi::{Env, JsValue};
use rampart_core::Error as CoreError;

/// What a failed call reports, kept until there is an `Env` to build the JS object with.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub message: String,
    pub code: u16,
    pub kind: String,
    pub retry_after: Option<u64>,
}

impl From<CoreError> for Failure {
    fn from(e: CoreError) -> Self {
        Self {
            message: e.message().to_owned(),
            code: e.code(),
            kind: e.kind().name().to_owned(),
            retry_after: e.retry_after(),
        }
    }
}

impl Failure {
    /// A widget whole-call failure (URL, signature, snippet): a 400 whose kind is its stable code.
    pub(crate) fn widget(kind: &str, message: &str) -> Self {
        Self { message: message.to_owned(), code: 400, kind: kind.to_owned(), retry_after: None }
    }

    /// The JS `Error`, as a napi error that rethrows that very object.
    pub(crate) fn into_js(self, env: &Env) -> napi::Error {
        match self.build(env) {
            Ok(e) | Err(e) => e,
        }
    }

    fn build(self, env: &Env) -> Result<napi::Error> {
        let mut obj = env.create_error(napi::Error::new(Status::GenericFailure, self.message))?;
        obj.set_named_property("code", self.code)?;
        obj.set_named_property("kind", self.kind)?;
        if let Some(secs) = self.retry_after {
            obj.set_named_property("retryAfter", secs as f64)?;
        }
        Ok(napi::Error::from(obj.to_unknown()))
    }
}

/// `result.or_throw(&env)?` in place of `?` for core results in synchronous functions.
pub(crate) trait Throw<T> {
    fn or_throw(self, env: &Env) -> Result<T>;
}

impl<T> Throw<T> for std::result::Result<T, CoreError> {
    fn or_throw(self, env: &Env) -> Result<T> {
        self.map_err(|e| Failure::from(e).into_js(env))
    }
}

impl<T> Throw<T> for std::result::Result<T, Failure> {
    fn or_throw(self, env: &Env) -> Result<T> {
        self.map_err(|e| e.into_js(env))
    }
}
