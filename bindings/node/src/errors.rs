//! One conversion from the core's errors to JavaScript: an instance of the package's exported
//! `RampartError` class whose `code` is the stable kind name (`'token_failed'`, Node's
//! convention for `code`), `status` the HTTP-style number and `message` the fixed message, plus
//! `retryAfter` (whole seconds) on `throttled` and `reason` on `webhook_verification_failed`.
//!
//! The class is plain JavaScript (`main.js`: a subclass of `Error` cannot be declared from
//! Rust). `main.js` sets it on the addon's exports object; the addon keeps a reference to that
//! object from its module init and builds every error it throws or rejects with through the
//! class found there. Loaded without `main.js` (the generated `index.js` alone), errors are
//! plain `Error`s with the same properties.

use napi::bindgen_prelude::*;
use napi::{Env, JsValue, ValueType};
use rampart_core::Error as CoreError;

use crate::convert::cast;

/// What a failed call reports, kept until there is an `Env` to build the JS object with.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub message: String,
    /// The stable name: a core error kind, or a widget whole-call code (`options_invalid`).
    pub code: String,
    pub status: u16,
    pub retry_after: Option<u64>,
    /// Why a webhook message did not verify (`'too_old'`, ...), on `webhook_verification_failed`.
    pub reason: Option<&'static str>,
}

impl From<CoreError> for Failure {
    fn from(e: CoreError) -> Self {
        Self {
            message: e.message().to_owned(),
            code: e.kind().name().to_owned(),
            status: e.code(),
            retry_after: e.retry_after(),
            reason: None,
        }
    }
}

/// The addon's exports object, per Node environment (the main thread and each worker).
struct Addon {
    exports: ObjectRef<false>,
}

/// Called once per environment from the module init: keeps the exports object, where
/// `main.js` puts `RampartError`.
pub(crate) fn remember_exports(env: &Env, exports: &Object<'_>) -> Result<()> {
    env.set_instance_data(Addon { exports: exports.create_ref::<false>()? }, (), |_| {})
}

/// `new RampartError(message, { code, status, retryAfter, reason })`.
type ErrorClass<'e> = Function<'e, FnArgs<(String, Object<'e>)>, Unknown<'e>>;

/// The `RampartError` constructor, when `main.js` has set it.
fn error_class<'e>(env: &'e Env) -> Result<Option<ErrorClass<'e>>> {
    let Some(addon) = env.get_instance_data::<Addon>()? else { return Ok(None) };
    let exports = addon.exports.get_value(env)?;
    match exports.get::<Unknown<'e>>("RampartError")? {
        Some(class) if class.get_type()? == ValueType::Function => cast(class).map(Some),
        _ => Ok(None),
    }
}

impl Failure {
    /// A widget whole-call failure (URL, signature, snippet): a 400 whose `code` is its stable code.
    pub(crate) fn widget(code: &str, message: &str) -> Self {
        Self { message: message.to_owned(), code: code.to_owned(), status: 400, retry_after: None, reason: None }
    }

    /// A received webhook message that does not verify: a 400 `webhook_verification_failed`
    /// whose `reason` says why.
    pub(crate) fn webhook(message: &str, reason: &'static str) -> Self {
        Self { reason: Some(reason), ..Self::widget("webhook_verification_failed", message) }
    }

    /// The `RampartError`, as a napi error that rethrows that very object.
    pub(crate) fn into_js(self, env: &Env) -> napi::Error {
        match self.build(env) {
            Ok(e) | Err(e) => e,
        }
    }

    fn build(self, env: &Env) -> Result<napi::Error> {
        let mut fields = Object::new(env)?;
        fields.set("code", self.code.as_str())?;
        fields.set("status", u32::from(self.status))?;
        if let Some(secs) = self.retry_after {
            fields.set("retryAfter", secs as f64)?;
        }
        if let Some(reason) = self.reason {
            fields.set("reason", reason)?;
        }
        if let Some(class) = error_class(env)? {
            return Ok(napi::Error::from(class.new_instance(FnArgs::from((self.message, fields)))?));
        }
        let mut obj = env.create_error(napi::Error::new(Status::GenericFailure, self.message))?;
        obj.set_named_property("code", self.code)?;
        obj.set_named_property("status", u32::from(self.status))?;
        if let Some(secs) = self.retry_after {
            obj.set_named_property("retryAfter", secs as f64)?;
        }
        if let Some(reason) = self.reason {
            obj.set_named_property("reason", reason)?;
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
