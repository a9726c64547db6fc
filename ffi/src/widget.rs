//! The purchase widget: options as JSON text, validation, canonical and signed URLs, snippets,
//! the host page's CSP, and receive-address checks (SPEC section 4).
//!
//! Widget problems are not error kinds of the 2FA API: they come back as a status (mostly
//! `RAMPART_STATUS_INVALID_INPUT`) with the core's stable code in `rampart_last_error_code`.

use std::ffi::{CStr, CString, c_char};
use std::sync::{Arc, OnceLock};

use rampart_core::widget::address::{self, AddressError, AddressKind, Chain, Network};
use rampart_core::widget::{
    CheckoutPart, ConfigError, IframeOptions, Issue, Mode, SignatureError, SnippetError, Target, UrlError, Validation,
    WidgetConfig,
};
use rampart_core::{Environment, Error, ErrorKind};
use serde_json::{Value, json};

use crate::boundary::{Coded, Failure, Out, c_bytes, coded_call, non_null, null_arg, opt_str_arg, str_arg, value_call};
use crate::status::rampart_status;
use crate::strings::library_string;

/// Longest options or configuration JSON text read, in bytes (the core bounds each value and
/// the number of options; this bounds the parse before that).
pub const RAMPART_WIDGET_MAX_JSON_BYTES: usize = 1 << 20;

/// No environment hint: `environment` in the options decides (see `rampart_widget_validate`).
pub const RAMPART_WIDGET_NO_ENVIRONMENT: u32 = u32::MAX;

/// What the options are for.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum rampart_widget_target {
    /// A custom URL (and the iframe snippet): the root or the hint gives the environment.
    RAMPART_WIDGET_TARGET_URL = 0,
    /// The script snippet: `environment` and `targetContainerId` are required.
    RAMPART_WIDGET_TARGET_SCRIPT = 1,
}

/// Which widget flow the options give.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum rampart_widget_mode {
    /// The full widget.
    RAMPART_WIDGET_MODE_STANDARD = 0,
    /// One coin, its receive address and an amount: the widget opens on payment.
    RAMPART_WIDGET_MODE_ONE_SCREEN_CHECKOUT = 1,
    /// Two of the three one-screen parts; the missing one is reported beside it.
    RAMPART_WIDGET_MODE_INCOMPLETE = 2,
}

/// The missing part of an incomplete one-screen checkout.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum rampart_widget_part {
    /// Nothing is missing (the mode is not incomplete).
    RAMPART_WIDGET_PART_NONE = 0,
    /// Exactly one coin in `tokens`.
    RAMPART_WIDGET_PART_TOKENS = 1,
    /// A `receiveAddress` for that coin.
    RAMPART_WIDGET_PART_RECEIVE_ADDRESS = 2,
    /// An `amount`.
    RAMPART_WIDGET_PART_AMOUNT = 3,
}

/// Widget settings: roots, brand, coins and minimums. Opaque; immutable once made, so one
/// handle may be shared by any number of threads. Made by `rampart_widget_config_default` or
/// `rampart_widget_config_from_json`, freed by `rampart_widget_config_free`.
#[derive(Debug)]
pub struct rampart_widget_config {
    config: Arc<WidgetConfig>,
}

/// The C strings of one issue, made once so accessors can lend them.
#[derive(Debug)]
struct CIssue {
    code: CString,
    path: CString,
    message: CString,
    value: Option<CString>,
    suggestion: Option<CString>,
}

/// The outcome of `rampart_widget_validate`: errors, warnings, mode and, when valid, the
/// options URLs and snippets are made from, with the configuration they were checked against.
/// Opaque and immutable: share it between threads for reading; free it once with
/// `rampart_widget_validation_free`.
#[derive(Debug)]
pub struct rampart_widget_validation {
    validation: Validation,
    config: Arc<WidgetConfig>,
    errors: Vec<CIssue>,
    warnings: Vec<CIssue>,
}

fn default_config() -> &'static Arc<WidgetConfig> {
    static DEFAULT: OnceLock<Arc<WidgetConfig>> = OnceLock::new();
    DEFAULT.get_or_init(|| Arc::new(WidgetConfig::default()))
}

/// The configuration behind a handle, or the default for NULL.
///
/// # Safety
/// `config` is NULL or a live handle.
pub(crate) unsafe fn config_ref<'a>(config: *const rampart_widget_config) -> &'a Arc<WidgetConfig> {
    if config.is_null() {
        return default_config();
    }
    // SAFETY: non-NULL, and the caller guarantees a live handle.
    unsafe { &(*config).config }
}

/// # Safety
/// `validation` is NULL or a live handle.
unsafe fn validation_arg<'a>(
    validation: *const rampart_widget_validation,
) -> Result<&'a rampart_widget_validation, Error> {
    let ptr = non_null(validation, "validation")?;
    // SAFETY: non-NULL, and the caller guarantees a live handle.
    Ok(unsafe { ptr.as_ref() })
}

fn invalid(code: &'static str, message: &'static str) -> Failure {
    Failure::Coded(Coded { status: rampart_status::RAMPART_STATUS_INVALID_INPUT, code, message })
}

fn url_error(e: UrlError) -> Failure {
    invalid(e.code(), e.message())
}

fn signature_error(e: SignatureError) -> Failure {
    invalid(e.code(), e.message())
}

fn snippet_error(e: SnippetError) -> Failure {
    invalid(e.code(), e.message())
}

fn config_error(e: ConfigError) -> Failure {
    Failure::Coded(Coded { status: rampart_status::RAMPART_STATUS_CONFIG, code: e.code(), message: e.message() })
}

fn address_error(e: AddressError) -> Failure {
    invalid(e.code(), e.message())
}

/// A required JSON text argument, parsed. Longer than the bound is
/// `RAMPART_STATUS_PAYLOAD_TOO_LARGE`; not JSON is `RAMPART_STATUS_INVALID_INPUT` "<name> must be
/// JSON text"; text that is not valid Unicode (bytes that are not UTF-8, or a `\uD800` escape
/// without its pair) is `RAMPART_STATUS_INVALID_INPUT` naming where it sits, as the other
/// languages name a lone surrogate in an options dict (see [`not_unicode_in_json`]).
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string.
unsafe fn json_arg(ptr: *const c_char, name: &str) -> Result<Value, Error> {
    // SAFETY: forwarded contract.
    let bytes = unsafe { c_bytes(ptr) }.ok_or_else(|| null_arg(name))?;
    if bytes.len() > RAMPART_WIDGET_MAX_JSON_BYTES {
        return Err(Error::new(ErrorKind::PayloadTooLarge));
    }
    let parsed = std::str::from_utf8(bytes).ok().map(serde_json::from_str::<Value>);
    match parsed {
        Some(Ok(value)) => Ok(value),
        _ => Err(not_unicode_in_json(bytes, name).unwrap_or_else(|| Error::invalid_input(name, "must be JSON text"))),
    }
}

/// Where JSON text holds text that is not valid Unicode, as the 400 every language gives:
/// "receiveAddress.btc must be valid Unicode text", "tokens[1] must be ..."; a key names the
/// object it is in ("receiveAddress must be ...", the argument at the top). The Python and Node
/// bindings build the same paths for a lone surrogate. Bytes that are not UTF-8 outside any
/// string name the argument. `None` when the text is valid Unicode (then it is simply not JSON).
///
/// Each bad sequence is replaced by a noncharacter the text does not hold, the result parsed,
/// and the first string or key holding that marker named.
fn not_unicode_in_json(bytes: &[u8], arg: &str) -> Option<Error> {
    let Marked { text, marker, found } = marked(bytes)?;
    if !found {
        return None;
    }
    let whole = || Error::not_unicode(arg);
    let Ok(value) = serde_json::from_str::<Value>(&text) else { return Some(whole()) };
    Some(find_marker(&value, marker, "", arg).map_or_else(whole, |field| Error::not_unicode_at(&field)))
}

/// JSON text with each sequence that is not valid Unicode replaced by one marker.
struct Marked {
    text: String,
    /// A noncharacter the given text does not hold.
    marker: char,
    /// Whether anything was replaced.
    found: bool,
}

/// Bytes that are not UTF-8, and `\uXXXX` escapes of lone surrogates in strings, replaced by a
/// marker; `None` only when the text holds every candidate marker (it is then not an origin
/// list or options anyone wrote).
fn marked(bytes: &[u8]) -> Option<Marked> {
    let lossy = String::from_utf8_lossy(bytes);
    let marker = ('\u{FDD0}'..='\u{FDEF}').find(|c| !lossy.contains(*c))?;
    let mut text = String::with_capacity(bytes.len());
    let mut found = false;
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            text.push(marker);
            found = true;
        }
    }
    let (text, lone) = mark_lone_surrogates(&text, marker);
    Some(Marked { text, marker, found: found || lone })
}

/// A list of origins given as a JSON array of strings (a partner's widget origins), read the way
/// the Python and Node bindings read a list: an item is named as the core names it
/// (`widgetOrigins[1] must be a string`; text that is not valid Unicode, bytes that are not
/// UTF-8 or a lone `\uD800` escape, `widgetOrigins[1] must be valid Unicode text`). A list longer
/// than the core allows is not read: as many empty items as one too many stand for it, so the
/// core gives its own "at most 20" answer, before any item's. NULL, text that is not JSON and
/// JSON that is not an array name the argument.
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string.
pub(crate) unsafe fn origins_arg(ptr: *const c_char, name: &str) -> Result<Vec<String>, Error> {
    use rampart_core::widget::origins::MAX_ORIGINS;
    // SAFETY: forwarded contract.
    let bytes = unsafe { c_bytes(ptr) }.ok_or_else(|| null_arg(name))?;
    if bytes.len() > RAMPART_WIDGET_MAX_JSON_BYTES {
        return Err(Error::new(ErrorKind::PayloadTooLarge));
    }
    let not_json = || Error::invalid_input(name, "must be JSON text");
    let Marked { text, marker, found } = match marked(bytes) {
        Some(m) => m,
        // No marker is free: then the text is read as it is (a lone escape is then not JSON).
        None => Marked {
            text: std::str::from_utf8(bytes).map_err(|_| Error::not_unicode(name))?.to_owned(),
            marker: '\0',
            found: false,
        },
    };
    let value =
        serde_json::from_str::<Value>(&text).map_err(|_| if found { Error::not_unicode(name) } else { not_json() })?;
    let Value::Array(items) = value else {
        return Err(Error::invalid_input(name, "must be a JSON array of strings"));
    };
    if items.len() > MAX_ORIGINS {
        return Ok(vec![String::new(); MAX_ORIGINS + 1]);
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(s) if found && s.contains(marker) => {
                Err(Error::not_unicode_at(&format!("widgetOrigins[{i}]")))
            }
            Value::String(s) => Ok(s),
            _ => Err(Error::invalid_input(&format!("widgetOrigins[{i}]"), "must be a string")),
        })
        .collect()
}

/// A list of origins as a library string: a compact JSON array of strings.
pub(crate) fn origins_string(origins: &[String]) -> Result<*mut c_char, Error> {
    json_string(&json!(origins))
}

/// JSON text with every `\uXXXX` escape of a lone surrogate (a high one not followed by a low
/// one, or a low one alone) inside a string replaced by `marker`, and whether there was one.
fn mark_lone_surrogates(text: &str, marker: char) -> (String, bool) {
    let hex = |s: &str| -> Option<u16> {
        s.get(..4).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit())).and_then(|h| u16::from_str_radix(h, 16).ok())
    };
    let escape_at = |i: usize| -> Option<u16> { text.get(i..)?.strip_prefix("\\u").and_then(hex) };
    let (mut out, mut found, mut in_string) = (String::with_capacity(text.len()), false, false);
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        if !in_string {
            in_string = c == '"';
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        match c {
            '"' => in_string = false,
            '\\' => match escape_at(i) {
                Some(0xD800..=0xDBFF) if matches!(escape_at(i + 6), Some(0xDC00..=0xDFFF)) => {
                    out.push_str(&text[i..i + 12]);
                    i += 12;
                    continue;
                }
                Some(0xD800..=0xDFFF) => {
                    out.push(marker);
                    found = true;
                    i += 6;
                    continue;
                }
                _ => {
                    // Any other escape: copy the backslash and the escaped character as they are.
                    out.push('\\');
                    i += 1;
                    if let Some(next) = text[i..].chars().next() {
                        out.push(next);
                        i += next.len_utf8();
                    }
                    continue;
                }
            },
            _ => {}
        }
        out.push(c);
        i += c.len_utf8();
    }
    (out, found)
}

/// The path of the first string or key (in the parsed order) holding `marker`: `a.b` for a
/// value under a key, `a[1]` for an item, the object's own path (or `arg`) for a key.
fn find_marker(value: &Value, marker: char, path: &str, arg: &str) -> Option<String> {
    let name = |p: &str| if p.is_empty() { arg.to_owned() } else { p.to_owned() };
    match value {
        Value::String(s) => s.contains(marker).then(|| name(path)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| find_marker(item, marker, &format!("{}[{i}]", name(path)), arg)),
        Value::Object(map) => map.iter().find_map(|(key, item)| {
            if key.contains(marker) {
                return Some(name(path));
            }
            let child = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            find_marker(item, marker, &child, arg)
        }),
        _ => None,
    }
}

/// A URL argument: NULL is ABI misuse; bytes that are not UTF-8 are not a URL (`url_invalid`).
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string.
unsafe fn url_arg<'a>(ptr: *const c_char) -> Result<&'a str, Failure> {
    // SAFETY: forwarded contract.
    let bytes = unsafe { c_bytes(ptr) }.ok_or_else(|| Error::invalid_input("url", "must not be NULL"))?;
    std::str::from_utf8(bytes).map_err(|_| url_error(UrlError::Invalid))
}

fn environment_arg(value: u32, name: &str) -> Result<Environment, Error> {
    match value {
        0 => Ok(Environment::Sandbox),
        1 => Ok(Environment::Production),
        _ => Err(Error::invalid_input(name, "must be RAMPART_ENVIRONMENT_SANDBOX or RAMPART_ENVIRONMENT_PRODUCTION")),
    }
}

/// A library string holding JSON.
fn json_string(value: &Value) -> Result<*mut c_char, Error> {
    library_string(&value.to_string())
}

/// Issue texts come from the caller's JSON and may hold a NUL, which a C string cannot: it is
/// shown as U+FFFD.
fn c_text(text: &str) -> CString {
    let owned = if text.contains('\0') { text.replace('\0', "\u{FFFD}") } else { text.to_owned() };
    CString::new(owned).unwrap_or_default()
}

fn c_issue(issue: &Issue) -> CIssue {
    CIssue {
        code: c_text(issue.code),
        path: c_text(&issue.path),
        message: c_text(issue.message),
        value: issue.value.as_deref().map(c_text),
        suggestion: issue.suggestion.as_deref().map(c_text),
    }
}

fn parsed_json(environment: Environment, options: serde_json::Map<String, Value>, warnings: &[Issue]) -> Value {
    json!({"environment": environment.as_str(), "options": options, "warnings": warnings})
}

/// The default widget configuration: the Rampart roots, brand "Rampart", coins btc, ltc, eth,
/// usdc, usdt, dai, sol, and a minimum purchase of 5 in each currency. Passing NULL wherever a
/// configuration is taken means the same.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL `out_config`). Ownership: on success
/// `*out_config` receives a handle freed with `rampart_widget_config_free`. Thread-safe.
///
/// # Safety
/// `out_config` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_config_default(out_config: *mut *mut rampart_widget_config) -> rampart_status {
    coded_call(|| {
        let out = Out::new(out_config, "out_config")?;
        let handle = Box::new(rampart_widget_config { config: Arc::clone(default_config()) });
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(Box::into_raw(handle)) };
        Ok(())
    })
}

/// A widget configuration from JSON text: an object with any of `domain`, `productionRoot`,
/// `sandboxRoot`, `brand`, `defaultClientName`, `defaultHomeScreenMessage`, `coins`
/// (`[{"symbol","chain","name"}]`) and `minimums` (`{"usd": "5"}`); what is left out keeps
/// its default.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL, not UTF-8 or not JSON, named in the last
/// error), `RAMPART_STATUS_CONFIG` for a rule the configuration breaks, with the stable code in
/// `rampart_last_error_code` (`config_root_not_https`, `config_json_invalid`, ...).
/// Ownership: `json` is copied; on success `*out_config` receives a handle freed with
/// `rampart_widget_config_free`. Thread-safe.
///
/// # Safety
/// `json` is NULL or NUL-terminated; `out_config` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_config_from_json(
    json: *const c_char,
    out_config: *mut *mut rampart_widget_config,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let value = unsafe { json_arg(json, "json") }?;
        let out = Out::new(out_config, "out_config")?;
        let config = WidgetConfig::from_json(&value).map_err(config_error)?;
        let handle = Box::new(rampart_widget_config { config: Arc::new(config) });
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(Box::into_raw(handle)) };
        Ok(())
    })
}

/// Free a widget configuration. NULL is a no-op. Validations made with it stay usable (they
/// keep what they need).
///
/// # Safety
/// `config` is NULL or a live handle not used by another thread during the call, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_config_free(config: *mut rampart_widget_config) {
    value_call((), || {
        if !config.is_null() {
            // SAFETY: the caller's contract: a `Box::into_raw` handle, freed once.
            drop(unsafe { Box::from_raw(config) });
        }
    })
}

/// Validate widget options, reporting every problem at once.
///
/// `config`: NULL for the default. `options_json`: UTF-8 JSON text, normally an object in the
/// script form (`receiveAddress` an object of coin to address, booleans as booleans; anything
/// but an object is the error `options_not_object`). `target`: a `rampart_widget_target`.
/// `environment`: the caller's environment (`RAMPART_ENVIRONMENT_SANDBOX` or `_PRODUCTION`)
/// or `RAMPART_WIDGET_NO_ENVIRONMENT`; for a URL the options' `environment` or this hint
/// decides (both given must agree), the script requires the option.
///
/// Invalid options are not a failure: the call returns `RAMPART_OK` and the validation lists
/// the issues (`rampart_widget_validation_is_valid`, `_error_at`, `_to_json`).
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL, not UTF-8 or not JSON text, an unknown target
/// or environment; the last error names the argument), `RAMPART_STATUS_PAYLOAD_TOO_LARGE`
/// (JSON text over `RAMPART_WIDGET_MAX_JSON_BYTES`). Ownership: inputs are copied; on success
/// `*out_validation` receives a handle freed with `rampart_widget_validation_free`. It holds a
/// reference to the configuration, so `config` may be freed first. Thread-safe.
///
/// # Safety
/// `config` is NULL or a live handle; `options_json` NULL or NUL-terminated; `out_validation`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_validate(
    config: *const rampart_widget_config,
    options_json: *const c_char,
    target: u32,
    environment: u32,
    out_validation: *mut *mut rampart_widget_validation,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let (config, options) = unsafe { (config_ref(config), json_arg(options_json, "options_json")?) };
        let target = match target {
            0 => Target::Url,
            1 => Target::Script,
            _ => {
                return Err(Error::invalid_input(
                    "target",
                    "must be RAMPART_WIDGET_TARGET_URL or RAMPART_WIDGET_TARGET_SCRIPT",
                )
                .into());
            }
        };
        let hint = match environment {
            RAMPART_WIDGET_NO_ENVIRONMENT => None,
            other => Some(environment_arg(other, "environment")?),
        };
        let out = Out::new(out_validation, "out_validation")?;
        let validation = rampart_core::widget::validate_value(&options, target, hint, config);
        let handle = Box::new(rampart_widget_validation {
            errors: validation.errors.iter().map(c_issue).collect(),
            warnings: validation.warnings.iter().map(c_issue).collect(),
            validation,
            config: Arc::clone(config),
        });
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(Box::into_raw(handle)) };
        Ok(())
    })
}

/// Free a validation. NULL is a no-op; the strings `_error_at` and `_warning_at` lent are
/// invalid afterwards.
///
/// # Safety
/// `validation` is NULL or a live handle not used by another thread during the call, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_validation_free(validation: *mut rampart_widget_validation) {
    value_call((), || {
        if !validation.is_null() {
            // SAFETY: the caller's contract: a `Box::into_raw` handle, freed once.
            drop(unsafe { Box::from_raw(validation) });
        }
    })
}

/// Whether the options have no error (warnings allowed). False for NULL. Thread-safe.
///
/// Ownership: the handle is borrowed; nothing to free.
///
/// # Safety
/// `validation` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_validation_is_valid(validation: *const rampart_widget_validation) -> bool {
    // SAFETY: the contract above.
    value_call(false, || unsafe { validation.as_ref() }.is_some_and(|v| v.validation.is_valid()))
}

/// The number of errors (0 for NULL). Thread-safe.
///
/// Ownership: the handle is borrowed; nothing to free.
///
/// # Safety
/// `validation` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_validation_error_count(validation: *const rampart_widget_validation) -> usize {
    // SAFETY: the contract above.
    value_call(0, || unsafe { validation.as_ref() }.map_or(0, |v| v.errors.len()))
}

/// The number of warnings (0 for NULL). Thread-safe.
///
/// Ownership: the handle is borrowed; nothing to free.
///
/// # Safety
/// `validation` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_validation_warning_count(
    validation: *const rampart_widget_validation,
) -> usize {
    // SAFETY: the contract above.
    value_call(0, || unsafe { validation.as_ref() }.map_or(0, |v| v.warnings.len()))
}

/// The mode the options give (reported even when there are errors), and in `*out_missing`
/// (optional) the missing part of an incomplete one-screen checkout or
/// `RAMPART_WIDGET_PART_NONE`.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL `validation` or `out_mode`). Thread-safe.
///
/// Ownership: the handle is borrowed; the outputs are plain values.
///
/// # Safety
/// `validation` is NULL or a live handle; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_validation_mode(
    validation: *const rampart_widget_validation,
    out_mode: *mut rampart_widget_mode,
    out_missing: *mut rampart_widget_part,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let v = unsafe { validation_arg(validation) }?;
        let out_mode = Out::new(out_mode, "out_mode")?;
        let out_missing = Out::optional(out_missing);
        let (mode, missing) = match v.validation.mode {
            Mode::Standard => {
                (rampart_widget_mode::RAMPART_WIDGET_MODE_STANDARD, rampart_widget_part::RAMPART_WIDGET_PART_NONE)
            }
            Mode::OneScreenCheckout => (
                rampart_widget_mode::RAMPART_WIDGET_MODE_ONE_SCREEN_CHECKOUT,
                rampart_widget_part::RAMPART_WIDGET_PART_NONE,
            ),
            Mode::Incomplete { missing } => (
                rampart_widget_mode::RAMPART_WIDGET_MODE_INCOMPLETE,
                match missing {
                    CheckoutPart::Token => rampart_widget_part::RAMPART_WIDGET_PART_TOKENS,
                    CheckoutPart::ReceiveAddress => rampart_widget_part::RAMPART_WIDGET_PART_RECEIVE_ADDRESS,
                    CheckoutPart::Amount => rampart_widget_part::RAMPART_WIDGET_PART_AMOUNT,
                },
            ),
        };
        // SAFETY: checked writable out-pointers.
        unsafe {
            out_mode.write(mode);
            if let Some(out) = out_missing {
                out.write(missing);
            }
        }
        Ok(())
    })
}

/// # Safety
/// As for the exported accessors.
#[allow(clippy::too_many_arguments)]
unsafe fn issue_at(
    validation: *const rampart_widget_validation,
    errors: bool,
    index: usize,
    out_code: *mut *const c_char,
    out_path: *mut *const c_char,
    out_message: *mut *const c_char,
    out_value: *mut *const c_char,
    out_suggestion: *mut *const c_char,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: forwarded contract.
        let v = unsafe { validation_arg(validation) }?;
        let out_code = Out::new(out_code, "out_code")?;
        let outs = (
            Out::optional(out_path),
            Out::optional(out_message),
            Out::optional(out_value),
            Out::optional(out_suggestion),
        );
        let list = if errors { &v.errors } else { &v.warnings };
        let issue = list.get(index).ok_or_else(|| Error::invalid_input("index", "must be below the count"))?;
        let opt = |s: &Option<CString>| s.as_deref().map_or(std::ptr::null(), CStr::as_ptr);
        // SAFETY: checked writable out-pointers.
        unsafe {
            out_code.write(issue.code.as_ptr());
            if let Some(out) = outs.0 {
                out.write(issue.path.as_ptr());
            }
            if let Some(out) = outs.1 {
                out.write(issue.message.as_ptr());
            }
            if let Some(out) = outs.2 {
                out.write(opt(&issue.value));
            }
            if let Some(out) = outs.3 {
                out.write(opt(&issue.suggestion));
            }
        }
        Ok(())
    })
}

/// Error `index` (0 to `_error_count` - 1), in the core's order: its stable `code`
/// (`"amount_format"`), `path` (`"amount"`, `"receiveAddress.btc"`, `"tokens[1]"`, empty for
/// the whole input), fixed English `message`, the offending `value` as it may be shown (keys
/// redacted; NULL when none) and a `suggestion` (NULL when none). Only `out_code` is required;
/// pass NULL for outputs you do not want. An embedded NUL in a path, value or suggestion is
/// shown as U+FFFD.
///
/// Ownership: the strings are borrowed from the validation, valid until
/// `rampart_widget_validation_free`; do not free them. Errors: `RAMPART_STATUS_INVALID_INPUT`
/// (NULL `validation` or `out_code`, `index` out of range). Thread-safe.
///
/// # Safety
/// `validation` is NULL or a live handle; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_validation_error_at(
    validation: *const rampart_widget_validation,
    index: usize,
    out_code: *mut *const c_char,
    out_path: *mut *const c_char,
    out_message: *mut *const c_char,
    out_value: *mut *const c_char,
    out_suggestion: *mut *const c_char,
) -> rampart_status {
    // SAFETY: forwarded contract.
    unsafe { issue_at(validation, true, index, out_code, out_path, out_message, out_value, out_suggestion) }
}

/// Warning `index` (0 to `_warning_count` - 1); as `rampart_widget_validation_error_at`.
///
/// Ownership: the strings are borrowed from the handle, valid until it is freed. Threading: thread-safe.
///
/// # Safety
/// `validation` is NULL or a live handle; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_validation_warning_at(
    validation: *const rampart_widget_validation,
    index: usize,
    out_code: *mut *const c_char,
    out_path: *mut *const c_char,
    out_message: *mut *const c_char,
    out_value: *mut *const c_char,
    out_suggestion: *mut *const c_char,
) -> rampart_status {
    // SAFETY: forwarded contract.
    unsafe { issue_at(validation, false, index, out_code, out_path, out_message, out_value, out_suggestion) }
}

/// The whole validation as JSON, the form every surface shares:
/// `{"errors":[...],"mode":{...},"options":{...}|null,"warnings":[...]}` with issues as
/// `{"code","message","path","suggestion","value"}`.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL arguments). Ownership: on success `*out_json`
/// receives a library string freed with `rampart_string_free`. Thread-safe.
///
/// # Safety
/// `validation` is NULL or a live handle; `out_json` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_validation_to_json(
    validation: *const rampart_widget_validation,
    out_json: *mut *mut c_char,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let v = unsafe { validation_arg(validation) }?;
        let out = Out::new(out_json, "out_json")?;
        let value = serde_json::to_value(&v.validation)
            .map_err(|e| Error::new(ErrorKind::Internal).with_cause(e.to_string()))?;
        let text = json_string(&value)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text) };
        Ok(())
    })
}

/// The validated options of a valid validation, or `options_invalid` (INVALID_INPUT).
fn valid_options(v: &rampart_widget_validation) -> Result<&rampart_core::widget::ValidatedOptions, Failure> {
    v.validation.options.as_ref().ok_or_else(|| {
        invalid("options_invalid", "The widget options have errors: build only from a valid validation.")
    })
}

/// The canonical custom URL of valid options (fixed parameter order, one percent-encoding set,
/// only the options given), on the root of their environment in the validation's
/// configuration.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL arguments; a validation with errors, code
/// `options_invalid`). Ownership: on success `*out_url` receives a library string freed with
/// `rampart_string_free`. Thread-safe.
///
/// # Safety
/// `validation` is NULL or a live handle; `out_url` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_build_url(
    validation: *const rampart_widget_validation,
    out_url: *mut *mut c_char,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let v = unsafe { validation_arg(validation) }?;
        let out = Out::new(out_url, "out_url")?;
        let url = rampart_core::widget::build_url(valid_options(v)?, &v.config);
        let url = library_string(&url)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(url) };
        Ok(())
    })
}

/// Read a custom URL back into options: `{"environment":"sandbox"|"production",
/// "options":{...},"warnings":[...]}` (options in the script form; parse warnings as issues).
/// Validate the options with `rampart_widget_validate` (URL target, this environment) before
/// using them.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` for NULL arguments and for a URL that cannot be
/// read, with the code (`url_too_long`, `url_invalid` (also for bytes that are not UTF-8),
/// `url_unknown_root`, `url_invalid_encoding`) in `rampart_last_error_code`. Ownership: on
/// success `*out_json` receives a library string freed with `rampart_string_free`. Thread-safe.
///
/// # Safety
/// `config` is NULL or a live handle; `url` NULL or NUL-terminated; `out_json` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_parse_url(
    config: *const rampart_widget_config,
    url: *const c_char,
    out_json: *mut *mut c_char,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let (config, url) = unsafe { (config_ref(config), url_arg(url)?) };
        let out = Out::new(out_json, "out_json")?;
        let parsed = rampart_core::widget::parse_url(url, config).map_err(url_error)?;
        let text = json_string(&parsed_json(parsed.environment, parsed.options, &parsed.warnings))?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text) };
        Ok(())
    })
}

/// Sign the canonical URL of valid options with the partner's secret key
/// (`sk_<environment>_...`, the options' environment) at `timestamp` (Unix seconds): the
/// canonical URL followed by `&timestamp=<ts>&signature=<64 hex digits>`.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL or non-UTF-8 arguments; a validation with
/// errors, `options_invalid`; `signature_key_invalid`, `signature_key_environment`, codes in
/// `rampart_last_error_code`). Ownership: the key is not kept; on success `*out_url` receives a
/// library string freed with `rampart_string_free`. Thread-safe.
///
/// # Safety
/// `validation` is NULL or a live handle; `secret_key` NULL or NUL-terminated; `out_url` NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_sign_url(
    validation: *const rampart_widget_validation,
    secret_key: *const c_char,
    timestamp: u64,
    out_url: *mut *mut c_char,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let (v, key) = unsafe { (validation_arg(validation)?, str_arg(secret_key, "secret_key")?) };
        let out = Out::new(out_url, "out_url")?;
        let url =
            rampart_core::widget::sign_url(valid_options(v)?, key, timestamp, &v.config).map_err(signature_error)?;
        let url = library_string(&url)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(url) };
        Ok(())
    })
}

/// Verify a signed URL with the partner's secret key at `now` (Unix seconds; time is passed
/// in, never read), accepting signatures up to `max_age_secs` old, and read it back as
/// `rampart_widget_parse_url` does.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` for NULL or non-UTF-8 arguments and for every
/// failure, with its code in `rampart_last_error_code`: a URL code (`url_unknown_root`, ...),
/// `signature_key_invalid`, `signature_key_environment`, `signature_missing`,
/// `signature_malformed`, `signature_mismatch`, `signature_expired`, `signature_from_future`.
/// Ownership: on success `*out_json` receives a library string freed with
/// `rampart_string_free`. Thread-safe.
///
/// # Safety
/// `config` is NULL or a live handle; strings NULL or NUL-terminated; `out_json` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_verify_signed_url(
    config: *const rampart_widget_config,
    url: *const c_char,
    secret_key: *const c_char,
    now: u64,
    max_age_secs: u64,
    out_json: *mut *mut c_char,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let (config, url, key) = unsafe { (config_ref(config), url_arg(url)?, str_arg(secret_key, "secret_key")?) };
        let out = Out::new(out_json, "out_json")?;
        let parsed =
            rampart_core::widget::verify_signed_url(url, key, now, max_age_secs, config).map_err(signature_error)?;
        let text = json_string(&parsed_json(parsed.environment, parsed.options, &parsed.warnings))?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text) };
        Ok(())
    })
}

/// The script snippet of options validated for `RAMPART_WIDGET_TARGET_SCRIPT`: the container
/// element, the SDK script and the render call (option values JSON-encoded with `<`, `>`, `&`
/// and the line separators escaped, so no value can close the script element), plus a
/// `<noscript>` link. `nonce` (optional): a CSP nonce, 1 to 256 base64 characters, set on both
/// script elements.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL or non-UTF-8 arguments; `options_invalid`,
/// `snippet_not_script_target`, `snippet_nonce_invalid` in `rampart_last_error_code`).
/// Ownership: on success `*out_html` receives a library string freed with
/// `rampart_string_free`. Thread-safe.
///
/// # Safety
/// `validation` is NULL or a live handle; `nonce` NULL or NUL-terminated; `out_html` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_script_snippet(
    validation: *const rampart_widget_validation,
    nonce: *const c_char,
    out_html: *mut *mut c_char,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let (v, nonce) = unsafe { (validation_arg(validation)?, opt_str_arg(nonce, "nonce")?) };
        let out = Out::new(out_html, "out_html")?;
        let options = valid_options(v)?;
        let html = match nonce {
            Some(nonce) => rampart_core::widget::script_snippet_with_nonce(options, nonce, &v.config),
            None => rampart_core::widget::script_snippet(options, &v.config),
        }
        .map_err(snippet_error)?;
        let html = library_string(&html)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(html) };
        Ok(())
    })
}

/// The iframe snippet on the canonical URL of valid options (either target): `width` and
/// `height` in CSS pixels (0 for the defaults 420 and 550), `title` the accessible title
/// (optional: `"<Brand> purchase widget"`; escaped), `lazy` adds `loading="lazy"`.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL or non-UTF-8 arguments; `options_invalid`).
/// Ownership: on success `*out_html` receives a library string freed with
/// `rampart_string_free`. Thread-safe.
///
/// # Safety
/// `validation` is NULL or a live handle; `title` NULL or NUL-terminated; `out_html` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_iframe_snippet(
    validation: *const rampart_widget_validation,
    width: u32,
    height: u32,
    title: *const c_char,
    lazy: bool,
    out_html: *mut *mut c_char,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let (v, title) = unsafe { (validation_arg(validation)?, opt_str_arg(title, "title")?) };
        let out = Out::new(out_html, "out_html")?;
        let defaults = IframeOptions::default();
        let iframe = IframeOptions {
            width: if width == 0 { defaults.width } else { width },
            height: if height == 0 { defaults.height } else { height },
            title: title.map(str::to_owned),
            lazy,
        };
        let html = rampart_core::widget::iframe_snippet(valid_options(v)?, &iframe, &v.config);
        let html = library_string(&html)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(html) };
        Ok(())
    })
}

/// What the host page's Content-Security-Policy must allow for the widget of `environment`
/// (`RAMPART_ENVIRONMENT_SANDBOX` or `_PRODUCTION`): `{"frameSrc","scriptSrc","header"}`, the
/// last being `frame-src <origin>; script-src <origin>`. `config`: NULL for the default.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (unknown environment, NULL `out_json`). Ownership: on
/// success `*out_json` receives a library string freed with `rampart_string_free`. Thread-safe.
///
/// # Safety
/// `config` is NULL or a live handle; `out_json` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_csp(
    config: *const rampart_widget_config,
    environment: u32,
    out_json: *mut *mut c_char,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let config = unsafe { config_ref(config) };
        let environment = environment_arg(environment, "environment")?;
        let out = Out::new(out_json, "out_json")?;
        let csp = rampart_core::widget::csp_directives(environment, config);
        let value = json!({"frameSrc": csp.frame_src, "scriptSrc": csp.script_src, "header": csp.to_header_value()});
        let text = json_string(&value)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Who may embed the widget (SPEC section 6.2)
// ---------------------------------------------------------------------------------------------

/// Check a list of embedding origins for a partner of `environment`
/// (`RAMPART_ENVIRONMENT_SANDBOX` or `_PRODUCTION`) and make them canonical, as a browser
/// serialises `event.origin` (`"HTTPS://Shop.Example:443"` is `"https://shop.example"`).
/// `origins_json` is a JSON array of strings, each `http(s)://host[:port]` (no path, query,
/// credentials or wildcard); at most 20, none twice, https only in production.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` with the last error naming the index
/// (`"widgetOrigins[1] must be https in production"`, `"widgetOrigins may list at most 20 origins"`,
/// `"widgetOrigins[0] must be valid Unicode text"` for bytes that are not UTF-8 or a lone
/// `\uD800` escape, `"widgetOrigins[0] must be a string"`), or the argument ("origins_json must be
/// JSON text", "... must be a JSON array of strings", "... must not be NULL"; an unknown
/// environment, a NULL `out_origins_json`); `RAMPART_STATUS_PAYLOAD_TOO_LARGE` beyond
/// `RAMPART_WIDGET_MAX_JSON_BYTES`.
///
/// Ownership: `origins_json` is read, never kept. On success `*out_origins_json` receives the
/// canonical origins, in the given order, as a compact JSON array
/// (`["https://shop.example"]`): a library string freed with `rampart_string_free`. Thread-safe.
///
/// # Safety
/// `origins_json` is NULL or NUL-terminated; `out_origins_json` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_check_origins(
    origins_json: *const c_char,
    environment: u32,
    out_origins_json: *mut *mut c_char,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let origins = unsafe { origins_arg(origins_json, "origins_json") }?;
        let environment = environment_arg(environment, "environment")?;
        let out = Out::new(out_origins_json, "out_origins_json")?;
        let origins = rampart_core::widget::origins::check_origins(&origins, environment)?;
        let text = origins_string(&origins)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text) };
        Ok(())
    })
}

/// The `Content-Security-Policy` directive the widget page sends for a partner's origins:
/// `frame-ancestors <origins>`, plus `http://localhost:* http://127.0.0.1:*` in sandbox;
/// `frame-ancestors 'none'` when that leaves nothing (production without origins). The
/// origins (`origins_json`, a JSON array of strings) are checked and made canonical first,
/// exactly as `rampart_widget_check_origins` does, so nothing but origins reaches the header.
///
/// Errors: as `rampart_widget_check_origins` (NULL `out_value` included). Ownership:
/// `origins_json` is read, never kept; on success `*out_value` receives the directive, a library
/// string freed with `rampart_string_free`. Thread-safe.
///
/// # Safety
/// `origins_json` is NULL or NUL-terminated; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_frame_ancestors(
    origins_json: *const c_char,
    environment: u32,
    out_value: *mut *mut c_char,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let origins = unsafe { origins_arg(origins_json, "origins_json") }?;
        let environment = environment_arg(environment, "environment")?;
        let out = Out::new(out_value, "out_value")?;
        let origins = rampart_core::widget::origins::check_origins(&origins, environment)?;
        let text = library_string(&rampart_core::widget::origins::frame_ancestors(&origins, environment))?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text) };
        Ok(())
    })
}

/// Whether the widget page may talk to a parent page at `origin` (a browser's `event.origin`,
/// compared byte for byte): one of the registered origins (`registered_json`, a JSON array of
/// strings, checked and made canonical first as `rampart_widget_check_origins` does), or in
/// sandbox any port of `http://localhost` or `http://127.0.0.1`. Not allowed is an outcome
/// (`*out_allowed` false), not an error.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` for a NULL `origin` or `out_allowed`, an `origin` that
/// is not UTF-8 ("origin must be valid Unicode text"), and `registered_json` as
/// `rampart_widget_check_origins` answers `origins_json`. Ownership: the strings are read, never
/// kept; `*out_allowed` is a plain value. Thread-safe.
///
/// # Safety
/// Strings are NULL or NUL-terminated; `out_allowed` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_widget_origin_allowed(
    origin: *const c_char,
    registered_json: *const c_char,
    environment: u32,
    out_allowed: *mut bool,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let origin = unsafe { str_arg(origin, "origin") }?;
        // SAFETY: as above.
        let registered = unsafe { origins_arg(registered_json, "registered_json") }?;
        let environment = environment_arg(environment, "environment")?;
        let out = Out::new(out_allowed, "out_allowed")?;
        let registered = rampart_core::widget::origins::check_origins(&registered, environment)?;
        let allowed = rampart_core::widget::origins::origin_allowed(origin, &registered, environment);
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(allowed) };
        Ok(())
    })
}

fn network_name(network: Network) -> &'static CStr {
    match network {
        Network::Mainnet => c"mainnet",
        Network::Testnet => c"testnet",
    }
}

fn kind_name(kind: AddressKind) -> &'static CStr {
    const NAMES: [&CStr; 22] = [
        c"p2pkh",
        c"p2sh",
        c"evm",
        c"solana",
        c"segwit",
        c"segwit_v0",
        c"segwit_v1",
        c"segwit_v2",
        c"segwit_v3",
        c"segwit_v4",
        c"segwit_v5",
        c"segwit_v6",
        c"segwit_v7",
        c"segwit_v8",
        c"segwit_v9",
        c"segwit_v10",
        c"segwit_v11",
        c"segwit_v12",
        c"segwit_v13",
        c"segwit_v14",
        c"segwit_v15",
        c"segwit_v16",
    ];
    let name = kind.name();
    NAMES.into_iter().find(|c| c.to_bytes() == name.as_bytes()).unwrap_or(c"unknown")
}

/// Check a receive address for a chain, checksum included. `chain` is `"bitcoin"`,
/// `"litecoin"`, `"ethereum"` (also usdc, usdt, dai) or `"solana"`; `allow_testnet` accepts
/// testnet and regtest addresses (sandbox only).
///
/// On success `*out_network` (optional) receives `"mainnet"` or `"testnet"` and `*out_kind`
/// (optional) `"p2pkh"`, `"p2sh"`, `"segwit_v0"` to `"segwit_v16"`, `"evm"` or `"solana"`:
/// static strings, never freed.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` for NULL arguments or an unknown chain (code
/// `invalid_input`), and for an address that fails, with the check that failed in
/// `rampart_last_error_code` (`address_base58_checksum`, `address_wrong_chain`, ...; an
/// address that is not UTF-8 is `address_bad_character`). Thread-safe.
///
/// # Safety
/// Strings are NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_address_validate(
    chain: *const c_char,
    address: *const c_char,
    allow_testnet: bool,
    out_network: *mut *const c_char,
    out_kind: *mut *const c_char,
) -> rampart_status {
    coded_call(|| {
        // SAFETY: the contract above.
        let chain = unsafe { str_arg(chain, "chain") }?;
        let chain = Chain::from_name(chain)
            .ok_or_else(|| Error::invalid_input("chain", "must be bitcoin, litecoin, ethereum or solana"))?;
        // SAFETY: the contract above.
        let bytes = unsafe { c_bytes(address) }.ok_or_else(|| Error::invalid_input("address", "must not be NULL"))?;
        let address = std::str::from_utf8(bytes).map_err(|_| address_error(AddressError::BadCharacter))?;
        let (out_network, out_kind) = (Out::optional(out_network), Out::optional(out_kind));
        let info = address::validate_address(chain, address, allow_testnet).map_err(address_error)?;
        // SAFETY: checked writable out-pointers.
        unsafe {
            if let Some(out) = out_network {
                out.write(network_name(info.network).as_ptr());
            }
            if let Some(out) = out_kind {
                out.write(kind_name(info.kind).as_ptr());
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::with_last_error_code;

    #[test]
    fn coded_failures_keep_their_code() {
        let status = coded_call(|| Err(url_error(UrlError::UnknownRoot)));
        assert_eq!(status, rampart_status::RAMPART_STATUS_INVALID_INPUT);
        with_last_error_code((), |code| assert_eq!(code, "url_unknown_root"));
        let status = coded_call(|| Err(config_error(ConfigError::RootNotHttps)));
        assert_eq!(status, rampart_status::RAMPART_STATUS_CONFIG);
        with_last_error_code((), |code| assert_eq!(code, "config_root_not_https"));
        assert_eq!(coded_call(|| Ok(())), rampart_status::RAMPART_OK);
        with_last_error_code((), |code| assert!(code.is_empty()));
    }

    #[test]
    fn text_that_is_not_unicode_is_named_by_its_path() {
        let named = |bytes: &[u8]| not_unicode_in_json(bytes, "options_json").map(|e| e.message().to_owned());
        // valid text (a pair of escapes, an escaped backslash before "ud800") is not flagged
        assert_eq!(named(br#"{"a":"\ud83d\ude00","b":"\\ud800"}"#), None);
        assert_eq!(named(b"{\"a\":"), None);
        // lone escapes, after valid escapes and escaped backslashes
        let text = br#"{"a":"\\ud800","b":"\ud83d\ude00","c":"x\ud800"}"#;
        assert_eq!(named(text).as_deref(), Some("c must be valid Unicode text"));
        assert_eq!(named(br#"{"a":["\udc00"]}"#).as_deref(), Some("a[0] must be valid Unicode text"));
        assert_eq!(named(br#"{"a":"\ud800\u0041"}"#).as_deref(), Some("a must be valid Unicode text"));
        // bytes that are not UTF-8, in a value, a key, or outside any string
        assert_eq!(named(b"{\"a\":{\"b\":\"\xff\"}}").as_deref(), Some("a.b must be valid Unicode text"));
        assert_eq!(named(b"{\"a\":{\"\xc3\":1}}").as_deref(), Some("a must be valid Unicode text"));
        assert_eq!(named(b"{\"\xc3\":1}").as_deref(), Some("options_json must be valid Unicode text"));
        assert_eq!(named(b"[1,\xff]").as_deref(), Some("options_json must be valid Unicode text"));
        // a path that reads like a field with its own error stays a plain 400
        let e = not_unicode_in_json(b"{\"text\":\"\xff\"}", "options_json").unwrap();
        assert_eq!((e.kind(), e.message()), (ErrorKind::InvalidInput, "text must be valid Unicode text"));
        // the marker is one the text does not already hold
        let text = "{\"a\":\"\u{FDD0}\",\"b\":\"\\udfff\"}";
        assert_eq!(named(text.as_bytes()).as_deref(), Some("b must be valid Unicode text"));
    }

    #[test]
    fn origin_lists_name_the_item() {
        let read = |text: &std::ffi::CStr| {
            // SAFETY: a NUL-terminated string.
            unsafe { origins_arg(text.as_ptr(), "origins_json") }.map_err(|e| e.message().to_owned())
        };
        assert_eq!(read(c"[\"a\",\"b\"]"), Ok(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(read(c"[\"a\",\"\\udfff\"]").unwrap_err(), "widgetOrigins[1] must be valid Unicode text");
        assert_eq!(read(c"[\"a\",\"b\xff\"]").unwrap_err(), "widgetOrigins[1] must be valid Unicode text");
        // an escaped noncharacter is text, not a marker
        assert_eq!(read(c"[\"\\ufdd0\"]"), Ok(vec!["\u{FDD0}".to_owned()]));
        assert_eq!(read(c"[1]").unwrap_err(), "widgetOrigins[0] must be a string");
        assert_eq!(read(c"{}").unwrap_err(), "origins_json must be a JSON array of strings");
        assert_eq!(read(c"[,]").unwrap_err(), "origins_json must be JSON text");
        // too long: one too many empty items stand for it
        let many = format!("[{}]", vec!["1"; 25].join(","));
        let many = std::ffi::CString::new(many).unwrap();
        assert_eq!(read(&many).unwrap().len(), rampart_core::widget::origins::MAX_ORIGINS + 1);
        // text holding every candidate marker is read as it is
        let all: String = ('\u{FDD0}'..='\u{FDEF}').collect();
        let all = std::ffi::CString::new(format!("[\"{all}\"]")).unwrap();
        assert_eq!(read(&all).unwrap()[0].chars().count(), 32);
    }

    #[test]
    fn a_nul_in_issue_text_is_shown_as_a_replacement_character() {
        assert_eq!(c_text("a\0b").to_str().unwrap(), "a\u{FFFD}b");
        let mut v = std::ptr::null_mut();
        // SAFETY: NUL-terminated JSON text and a writable out-pointer.
        let status = unsafe { rampart_widget_validate(std::ptr::null(), c"{\"a\\u0000b\":1}".as_ptr(), 0, 0, &mut v) };
        assert_eq!(status, rampart_status::RAMPART_OK);
        let mut path = std::ptr::null();
        let mut code = std::ptr::null();
        // SAFETY: a live handle and writable out-pointers.
        let status = unsafe {
            rampart_widget_validation_warning_at(
                v,
                0,
                &mut code,
                &mut path,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(status, rampart_status::RAMPART_OK);
        // SAFETY: borrowed from the live validation.
        assert_eq!(unsafe { CStr::from_ptr(path) }.to_str().unwrap(), "a\u{FFFD}b");
        // SAFETY: the handle made above, freed once.
        unsafe { rampart_widget_validation_free(v) };
    }
}
