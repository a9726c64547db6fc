//! TOTP per RFC 6238 (HMAC-SHA1, 6 digits, 30-second step) and the helpers to enrol a user:
//! secret generation, the base32 `manual` key, the otpauth Key URI and its QR code.
//!
//! These functions are pure (no store, time passed in), so partners that keep their own
//! storage can use them directly:
//!
//! ```
//! use rampart_core::totp::{self, Secret};
//! use rampart_core::Token;
//!
//! let secret = Secret::from_bytes(b"12345678901234567890".to_vec())?;
//! let code = totp::code_at(&secret, 59);
//! assert_eq!(code, "287082");
//! // Window 1: the codes of steps t-1, t and t+1 verify; the matched step is reported.
//! assert_eq!(totp::verify(&secret, Token::parse(&code), 59 + 30, 1), Some(1));
//! # Ok::<(), rampart_core::Error>(())
//! ```
//!
//! Why not `totp-rs` directly: it does not report which step matched (needed for replay
//! protection) and stops at the first match. The building blocks are the same RustCrypto
//! crates; `totp-rs` is run as an independent peer in the tests and benchmarks.

mod qr;
mod uri;

use std::fmt;

use hmac::{Hmac, Mac};
use sha1::Sha1;
use subtle::{ConditionallySelectable, ConstantTimeEq};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::error::{Error, Result};
use crate::token::{Code, Token};

pub use qr::qr_png_data_uri;
pub use uri::{KeyUri, key_uri, parse_key_uri};

/// Seconds per time step.
pub const STEP_SECONDS: u64 = 30;
/// Digits per code.
pub const DIGITS: u32 = 6;
/// Default secret length in bytes (160 bits, RFC 4226 section 4).
pub const DEFAULT_SECRET_BYTES: usize = 20;
/// The largest verification window (steps either side).
pub const MAX_WINDOW: u8 = 2;
/// The smallest secret accepted from a caller (128 bits, RFC 4226 section 4's floor).
pub const MIN_SECRET_BYTES: usize = 16;
/// The largest secret accepted.
pub const MAX_SECRET_BYTES: usize = 64;

type HmacSha1 = Hmac<Sha1>;

/// A shared TOTP secret. Prints redacted and is zeroized on drop.
#[derive(Clone, Zeroize, ZeroizeOnDrop, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl Secret {
    /// `len` bytes (20..=64) from the OS CSPRNG.
    pub fn generate(len: usize) -> Result<Self> {
        if !(DEFAULT_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&len) {
            return Err(Error::invalid_input("secretLength", "must be 20 to 64 bytes"));
        }
        let mut bytes = vec![0u8; len];
        crate::crypto::fill_random(&mut bytes)?;
        Ok(Self(bytes))
    }

    /// Wrap existing secret bytes (16..=64).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self> {
        if (MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&bytes.len()) {
            Ok(Self(bytes))
        } else {
            let mut bytes = bytes;
            bytes.zeroize();
            Err(Error::invalid_input("secret", "must be 16 to 64 bytes"))
        }
    }

    /// Parse base32 (RFC 4648; any case; spaces, hyphens and `=` padding ignored).
    pub fn from_base32(text: &str) -> Result<Self> {
        let mut clean: Vec<u8> =
            text.bytes().filter(|b| !matches!(b, b' ' | b'-' | b'=')).map(|b| b.to_ascii_uppercase()).collect();
        let decoded = data_encoding::BASE32_NOPAD.decode(&clean);
        clean.zeroize();
        let bytes = decoded.map_err(|_| Error::invalid_input("secret", "must be base32"))?;
        Self::from_bytes(bytes)
    }

    /// The unpadded base32 text for manual entry (32 characters for 20 bytes).
    pub fn to_base32(&self) -> String {
        data_encoding::BASE32_NOPAD.encode(&self.0)
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// The time step of a Unix time.
pub const fn step_at(unix_time: u64) -> u64 {
    unix_time / STEP_SECONDS
}

/// A keyed HMAC-SHA1 ready to be cloned per counter, so the key schedule runs once.
#[derive(Clone)]
struct Hotp(HmacSha1);

impl Hotp {
    fn new(secret: &[u8]) -> Self {
        // HMAC accepts keys of any length; this cannot fail.
        Self(HmacSha1::new_from_slice(secret).unwrap_or_else(|_| unreachable!()))
    }

    /// RFC 4226 section 5.3: HMAC, dynamic truncation, modulo 10^6.
    fn value(&self, counter: u64) -> u32 {
        let mut mac = self.0.clone();
        mac.update(&counter.to_be_bytes());
        let h = mac.finalize().into_bytes();
        let offset = usize::from(h[19] & 0x0f);
        let bin = u32::from_be_bytes([h[offset], h[offset + 1], h[offset + 2], h[offset + 3]]) & 0x7fff_ffff;
        bin % 10u32.pow(DIGITS)
    }
}

/// RFC 4226 HOTP value for a counter, as a zero-padded 6-digit string.
pub fn hotp(secret: &Secret, counter: u64) -> String {
    format!("{:06}", Hotp::new(secret.as_bytes()).value(counter))
}

/// The code for a secret at a Unix time, as a zero-padded 6-digit string.
pub fn code_at(secret: &Secret, unix_time: u64) -> String {
    hotp(secret, step_at(unix_time))
}

/// Verify a code against a secret at a Unix time with `window` steps either side (clamped to
/// [`MAX_WINDOW`]). Returns the matched time step, or `None`.
///
/// Every candidate in the window is computed and compared in constant time, with no early
/// return; when two steps give the same code the later step is reported. A missing or
/// malformed token returns `None` without computing any HMAC.
pub fn verify(secret: &Secret, token: Token, unix_time: u64, window: u8) -> Option<u64> {
    match token {
        Token::Code(code) => verify_code(secret.as_bytes(), code, unix_time, window),
        Token::Missing | Token::Malformed => None,
    }
}

pub(crate) fn verify_code(secret: &[u8], code: Code, unix_time: u64, window: u8) -> Option<u64> {
    verify_keyed(&Hotp::new(secret), code, unix_time, window)
}

fn verify_keyed(hotp: &Hotp, code: Code, unix_time: u64, window: u8) -> Option<u64> {
    let w = u64::from(window.min(MAX_WINDOW));
    let t = step_at(unix_time);
    let mut found = subtle::Choice::from(0);
    let mut matched = 0u64;
    // Candidates below step 0 or above u64::MAX do not exist; which ones exist depends only
    // on the time, never on the secret or the code.
    for step in t.saturating_sub(w)..=t.saturating_add(w) {
        let hit = hotp.value(step).ct_eq(&code.value());
        matched.conditional_assign(&step, hit);
        found |= hit;
    }
    if bool::from(found) { Some(matched) } else { None }
}

/// A secret keyed once, for callers that verify many codes against the same secret (a C
/// caller holding a handle, say): [`verify`](PreparedSecret::verify) then skips the HMAC key
/// schedule and allocates nothing. It holds key material and never prints it.
#[derive(Clone)]
pub struct PreparedSecret(Hotp);

impl PreparedSecret {
    /// Key the HMAC for `secret`.
    pub fn new(secret: &Secret) -> Self {
        Self(Hotp::new(secret.as_bytes()))
    }

    /// Exactly [`verify`] for the secret this was made from.
    pub fn verify(&self, token: Token, unix_time: u64, window: u8) -> Option<u64> {
        match token {
            Token::Code(code) => verify_keyed(&self.0, code, unix_time, window),
            Token::Missing | Token::Malformed => None,
        }
    }
}

impl fmt::Debug for PreparedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PreparedSecret(<redacted>)")
    }
}

/// A freshly generated secret with everything a user needs to enrol it.
#[derive(Clone)]
pub struct Enrolment {
    /// The secret.
    pub secret: Secret,
    /// Unpadded base32 of the secret, for manual entry.
    pub manual: String,
    /// The otpauth Key URI.
    pub uri: String,
    /// The Key URI as a QR code, `data:image/png;base64,...`.
    pub qr_code: String,
}

impl fmt::Debug for Enrolment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Enrolment { <redacted> }")
    }
}

/// Generate a 20-byte secret and its manual key, Key URI and QR data URI.
pub fn new_secret(issuer: &str, account: &str) -> Result<Enrolment> {
    enrol(Secret::generate(DEFAULT_SECRET_BYTES)?, issuer, account)
}

/// The manual key, Key URI and QR data URI of an existing secret.
pub fn enrol(secret: Secret, issuer: &str, account: &str) -> Result<Enrolment> {
    let manual = secret.to_base32();
    let uri = key_uri(issuer, account, &manual);
    let qr_code = qr_png_data_uri(&uri)?;
    Ok(Enrolment { secret, manual, uri, qr_code })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rfc_secret() -> Secret {
        Secret::from_bytes(b"12345678901234567890".to_vec()).unwrap()
    }

    #[test]
    fn prepared_secret_answers_as_verify() {
        let secret = rfc_secret();
        let prepared = PreparedSecret::new(&secret);
        assert_eq!(format!("{prepared:?}"), "PreparedSecret(<redacted>)");
        for t in [0u64, 59, 1_111_111_109, 2_000_000_000, u64::MAX] {
            for at in [t.saturating_sub(60), t.saturating_sub(30), t, t.saturating_add(30), t.saturating_add(60)] {
                for token in [code_at(&secret, at).as_str(), "000000", "12345", ""] {
                    for window in 0..=3 {
                        let want = verify(&secret, Token::parse(token), t, window);
                        assert_eq!(prepared.verify(Token::parse(token), t, window), want, "{t} {at} {window}");
                    }
                }
            }
        }
    }

    #[test]
    fn rfc4226_appendix_d() {
        let expected =
            ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"];
        for (counter, want) in expected.iter().enumerate() {
            assert_eq!(hotp(&rfc_secret(), counter as u64), *want, "counter {counter}");
        }
    }

    #[test]
    fn rfc6238_appendix_b_sha1() {
        // Appendix B lists 8-digit values; the 6-digit code is the same value mod 10^6.
        let table = [
            (59u64, "94287082"),
            (1_111_111_109, "07081804"),
            (1_111_111_111, "14050471"),
            (1_234_567_890, "89005924"),
            (2_000_000_000, "69279037"),
            (20_000_000_000, "65353130"),
        ];
        for (t, eight) in table {
            assert_eq!(code_at(&rfc_secret(), t), eight[2..], "T = {t}");
            let token = Token::parse(&eight[2..]);
            assert_eq!(verify(&rfc_secret(), token, t, 0), Some(step_at(t)));
        }
    }

    #[test]
    fn window_width_one_and_zero() {
        let s = rfc_secret();
        let now = 1_111_111_111u64;
        let t = step_at(now);
        let code_of = |step: u64| Token::parse(&hotp(&s, step));
        let results: Vec<_> = [t - 2, t - 1, t, t + 1, t + 2].iter().map(|&k| verify(&s, code_of(k), now, 1)).collect();
        assert_eq!(results, [None, Some(t - 1), Some(t), Some(t + 1), None]);
        let results: Vec<_> = [t - 1, t, t + 1].iter().map(|&k| verify(&s, code_of(k), now, 0)).collect();
        assert_eq!(results, [None, Some(t), None]);
    }

    #[test]
    fn step_boundaries() {
        let s = rfc_secret();
        // 59 is the last second of step 1, 60 the first of step 2.
        let code1 = Token::parse(&hotp(&s, 1));
        let code2 = Token::parse(&hotp(&s, 2));
        assert_eq!(verify(&s, code1, 59, 0), Some(1));
        assert_eq!(verify(&s, code1, 60, 0), None);
        assert_eq!(verify(&s, code2, 59, 0), None);
        assert_eq!(verify(&s, code2, 60, 0), Some(2));
        // At time 0 the window has no step -1; nothing wraps.
        assert_eq!(verify(&s, Token::parse(&hotp(&s, 0)), 0, 2), Some(0));
        assert_eq!(verify(&s, Token::parse(&hotp(&s, u64::MAX / 30)), u64::MAX, 2), Some(u64::MAX / 30));
    }

    #[test]
    fn window_is_clamped() {
        let s = rfc_secret();
        let now = 3000;
        let far = Token::parse(&hotp(&s, step_at(now) + 3));
        assert_eq!(verify(&s, far, now, 200), None);
    }

    #[test]
    fn matches_totp_rs() {
        let raw = b"an independent peer check!".to_vec();
        let ours = Secret::from_bytes(raw.clone()).unwrap();
        let peer = totp_rs::TOTP::new_unchecked(totp_rs::Algorithm::SHA1, 6, 1, 30, raw);
        for t in [0u64, 29, 30, 59, 1_700_000_000, 2_000_000_000, 20_000_000_000] {
            assert_eq!(code_at(&ours, t), peer.generate(t), "t = {t}");
        }
    }

    #[test]
    fn secrets() {
        let s = Secret::generate(20).unwrap();
        assert_eq!(s.to_base32().len(), 32);
        assert_eq!(Secret::from_base32(&s.to_base32().to_lowercase()).unwrap(), s);
        assert!(Secret::generate(19).is_err());
        assert!(Secret::generate(65).is_err());
        assert_ne!(Secret::generate(20).unwrap(), s);
        assert_eq!(format!("{s:?}"), "Secret(<redacted>)");
        assert!(Secret::from_base32("not base32!").is_err());
        assert!(Secret::from_bytes(vec![1; 15]).is_err());
    }
}
