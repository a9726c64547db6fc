//! Signed custom URLs: HMAC-SHA256 over the canonical query plus a timestamp.

use std::fmt;

use data_encoding::HEXLOWER;
use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::config::WidgetConfig;
use super::urls::{ParsedUrl, UrlError, build_url, canonical_query, parse_url, split_url};
use super::validate::ValidatedOptions;
use crate::partner::{Environment, secret_key_hash};

/// How far in the future a timestamp may be (clock skew between signer and verifier), seconds.
pub const MAX_CLOCK_SKEW_SECS: u64 = 60;

const TIMESTAMP: &str = "&timestamp=";
const SIGNATURE: &str = "&signature=";

/// Why signing or verification failed. Each has a stable [`code`](SignatureError::code) and a
/// fixed [`message`](SignatureError::message).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SignatureError {
    /// The key is not a secret key (`sk_<environment>_<letters and digits>`).
    KeyInvalid,
    /// The secret key is for the other environment.
    KeyEnvironment,
    /// The URL has no `signature` parameter.
    Missing,
    /// `timestamp` or `signature` is missing, misplaced or not well-formed.
    Malformed,
    /// The signature does not match (wrong key, or the URL was changed).
    Mismatch,
    /// Older than the allowed age.
    Expired,
    /// Timestamped further in the future than [`MAX_CLOCK_SKEW_SECS`].
    FromFuture,
    /// The URL itself could not be read.
    Url(UrlError),
}

impl SignatureError {
    /// The stable snake_case code (a [`UrlError`]'s own code for [`SignatureError::Url`]).
    pub const fn code(self) -> &'static str {
        match self {
            SignatureError::KeyInvalid => "signature_key_invalid",
            SignatureError::KeyEnvironment => "signature_key_environment",
            SignatureError::Missing => "signature_missing",
            SignatureError::Malformed => "signature_malformed",
            SignatureError::Mismatch => "signature_mismatch",
            SignatureError::Expired => "signature_expired",
            SignatureError::FromFuture => "signature_from_future",
            SignatureError::Url(error) => error.code(),
        }
    }

    /// A fixed English message.
    pub const fn message(self) -> &'static str {
        match self {
            SignatureError::KeyInvalid => {
                "The signing key must be a secret key: sk_sandbox_ or sk_production_ followed by letters and digits."
            }
            SignatureError::KeyEnvironment => "The secret key belongs to the other environment.",
            SignatureError::Missing => "The URL is not signed: it has no signature parameter.",
            SignatureError::Malformed => "The URL must end with timestamp=<Unix seconds>&signature=<64 hex digits>.",
            SignatureError::Mismatch => "The signature does not match: the URL was changed or signed with another key.",
            SignatureError::Expired => "The signed URL has expired.",
            SignatureError::FromFuture => "The signed URL is timestamped in the future.",
            SignatureError::Url(error) => error.message(),
        }
    }
}

impl fmt::Display for SignatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for SignatureError {}

impl From<UrlError> for SignatureError {
    fn from(error: UrlError) -> Self {
        SignatureError::Url(error)
    }
}

/// The environment of `sk_<environment>_<1 to 128 letters and digits>`.
fn secret_key_environment(key: &str) -> Result<Environment, SignatureError> {
    let rest = key.strip_prefix("sk_").ok_or(SignatureError::KeyInvalid)?;
    let (env, body) = if let Some(body) = rest.strip_prefix("sandbox_") {
        (Environment::Sandbox, body)
    } else if let Some(body) = rest.strip_prefix("production_") {
        (Environment::Production, body)
    } else {
        return Err(SignatureError::KeyInvalid);
    };
    let ok = !body.is_empty() && body.len() <= 128 && body.bytes().all(|b| b.is_ascii_alphanumeric());
    if ok { Ok(env) } else { Err(SignatureError::KeyInvalid) }
}

fn mac(key_hash: &[u8; 32], message: &str) -> Hmac<Sha256> {
    // HMAC zero-pads keys shorter than the 64-byte block, so padding here gives the same MAC
    // through the infallible fixed-size constructor.
    let mut block = [0u8; 64];
    for (slot, byte) in block.iter_mut().zip(key_hash) {
        *slot = *byte;
    }
    let mut mac = <Hmac<Sha256> as KeyInit>::new(&block.into());
    mac.update(message.as_bytes());
    mac
}

/// Signs the canonical URL of validated options with the partner's secret key at `timestamp`
/// (Unix seconds). The key must be the secret key of the options' environment.
///
/// The signed message is exactly `<canonical query>&timestamp=<ts>` (`ts` in decimal Unix
/// seconds), and the URL is `<root>?<canonical query>&timestamp=<ts>&signature=<hex>` with the
/// signature as 64 lower-case hex digits.
///
/// The HMAC key is SHA-256 of the partner's secret key text, the same digest
/// [`secret_key_hash`](crate::partner::secret_key_hash) stores. The partner signs with the
/// secret key it holds, and a server that keeps only that digest can still verify
/// ([`verify_signed_url_with_key_hash`]); the digest lets one sign URLs but not call the API.
///
/// ```
/// use rampart_core::widget::{sign_url, validate, verify_signed_url, Target, WidgetConfig};
/// use rampart_core::Environment;
///
/// let config = WidgetConfig::default();
/// let options = serde_json::json!({"publicKey": "pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc", "amount": "50"});
/// let validation = validate(options.as_object().unwrap(), Target::Url, Some(Environment::Sandbox), &config);
/// let options = validation.options.unwrap();
///
/// let secret = "sk_sandbox_9fJ2kLmN3pQrS7tUvWxYz";
/// let url = sign_url(&options, secret, 1_700_000_000, &config)?;
/// let parsed = verify_signed_url(&url, secret, 1_700_000_100, 600, &config)?;
/// assert_eq!(parsed.options, options.url_options());
/// # Ok::<(), rampart_core::widget::SignatureError>(())
/// ```
pub fn sign_url(
    options: &ValidatedOptions,
    secret_key: &str,
    timestamp: u64,
    config: &WidgetConfig,
) -> Result<String, SignatureError> {
    if secret_key_environment(secret_key)? != options.environment() {
        return Err(SignatureError::KeyEnvironment);
    }
    let query = canonical_query(options, config);
    let signed = format!("{query}{TIMESTAMP}{timestamp}");
    let tag = mac(&secret_key_hash(secret_key), &signed).finalize().into_bytes();
    let mut url = build_url(options, config);
    url.push_str(TIMESTAMP);
    url.push_str(&timestamp.to_string());
    url.push_str(SIGNATURE);
    url.push_str(&HEXLOWER.encode(&tag));
    Ok(url)
}

/// Verifies a signed URL with the partner's secret key and reads it back.
///
/// Checks, in order: the URL and its root, the key (a secret key of the root's environment),
/// the form of `timestamp` and `signature` (the last two parameters), the signature (constant
/// time), then the age: older than `max_age_secs` before `now` is expired, more than
/// [`MAX_CLOCK_SKEW_SECS`] after `now` is from the future. Time is passed in, never read.
pub fn verify_signed_url(
    url: &str,
    secret_key: &str,
    now: u64,
    max_age_secs: u64,
    config: &WidgetConfig,
) -> Result<ParsedUrl, SignatureError> {
    let (environment, _, _) = split_url(url, config)?;
    if secret_key_environment(secret_key)? != environment {
        return Err(SignatureError::KeyEnvironment);
    }
    verify_signed_url_with_key_hash(url, &secret_key_hash(secret_key), now, max_age_secs, config)
}

/// [`verify_signed_url`] with the stored digest of the secret key (SHA-256 of its text) instead
/// of the key. The caller checks that the partner's environment is the parsed one.
pub fn verify_signed_url_with_key_hash(
    url: &str,
    key_hash: &[u8; 32],
    now: u64,
    max_age_secs: u64,
    config: &WidgetConfig,
) -> Result<ParsedUrl, SignatureError> {
    let (_, query, fragment) = split_url(url, config)?;
    if fragment.is_some() {
        return Err(SignatureError::Malformed);
    }
    let (signed, signature) = match query.rsplit_once(SIGNATURE) {
        Some(parts) => parts,
        None if query.starts_with("signature=") || query.contains("&signature=") => {
            return Err(SignatureError::Malformed);
        }
        None => return Err(SignatureError::Missing),
    };
    let tag = HEXLOWER.decode(signature.as_bytes()).map_err(|_| SignatureError::Malformed)?;
    if tag.len() != 32 {
        return Err(SignatureError::Malformed);
    }
    let (unsigned, timestamp) = signed.rsplit_once(TIMESTAMP).ok_or(SignatureError::Malformed)?;
    if timestamp.is_empty() || timestamp.len() > 20 || !timestamp.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SignatureError::Malformed);
    }
    let timestamp: u64 = timestamp.parse().map_err(|_| SignatureError::Malformed)?;
    mac(key_hash, signed).verify_slice(&tag).map_err(|_| SignatureError::Mismatch)?;
    if timestamp > now.saturating_add(MAX_CLOCK_SKEW_SECS) {
        return Err(SignatureError::FromFuture);
    }
    if now > timestamp.saturating_add(max_age_secs) {
        return Err(SignatureError::Expired);
    }
    let base_len = url.len().saturating_sub(query.len());
    let unsigned_url = format!("{}{unsigned}", url.get(..base_len).unwrap_or_default());
    Ok(parse_url(&unsigned_url, config)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_key_gives_the_standard_hmac() {
        let key = secret_key_hash("sk_sandbox_abc");
        let mut standard = <Hmac<Sha256> as Mac>::new_from_slice(&key).expect("any key length");
        standard.update(b"publicKey=pk_sandbox_x&timestamp=1");
        let ours = mac(&key, "publicKey=pk_sandbox_x&timestamp=1").finalize().into_bytes();
        assert_eq!(ours, standard.finalize().into_bytes());
    }

    #[test]
    fn secret_key_shape() {
        assert_eq!(secret_key_environment("sk_sandbox_abc"), Ok(Environment::Sandbox));
        assert_eq!(secret_key_environment("sk_production_abc"), Ok(Environment::Production));
        for bad in ["pk_sandbox_abc", "sk_sandbox_", "sk_live_abc", "sk_sandbox_a b", ""] {
            assert_eq!(secret_key_environment(bad), Err(SignatureError::KeyInvalid), "{bad}");
        }
    }
}
