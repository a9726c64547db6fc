//! The otpauth Key URI (Google Authenticator's Key Uri Format).

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use url::Url;

/// Everything but RFC 3986 unreserved characters is escaped, so `:` `%` `&` `/` `?` `#`, space
/// (as `%20`) and non-ASCII survive in both the label and the query.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

fn escape(s: &str) -> String {
    utf8_percent_encode(s, COMPONENT).to_string()
}

/// `otpauth://totp/{issuer}:{account}?secret=...&issuer=...&algorithm=SHA1&digits=6&period=30`
/// with the issuer and account percent-escaped.
pub fn key_uri(issuer: &str, account: &str, secret_base32: &str) -> String {
    let mut url = Url::parse("otpauth://totp").unwrap_or_else(|_| unreachable!("constant URL"));
    url.set_path(&format!("/{}:{}", escape(issuer), escape(account)));
    url.set_query(Some(&format!(
        "secret={}&issuer={}&algorithm=SHA1&digits={}&period={}",
        escape(secret_base32),
        escape(issuer),
        super::DIGITS,
        super::STEP_SECONDS
    )));
    url.into()
}

/// A parsed Key URI.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyUri {
    /// The issuer from the label.
    pub issuer: String,
    /// The account name from the label.
    pub account: String,
    /// The `secret` parameter (base32).
    pub secret: String,
    /// The `issuer` parameter.
    pub issuer_param: Option<String>,
}

impl std::fmt::Debug for KeyUri {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyUri")
            .field("issuer", &self.issuer)
            .field("account", &self.account)
            .field("secret", &"<redacted>")
            .finish()
    }
}

/// Parse a TOTP Key URI back into its parts (the inverse of [`key_uri`]).
pub fn parse_key_uri(uri: &str) -> Option<KeyUri> {
    let url = Url::parse(uri).ok()?;
    if url.scheme() != "otpauth" || url.host_str() != Some("totp") {
        return None;
    }
    let label = url.path().strip_prefix('/')?;
    let (issuer, account) = label.split_once(':')?;
    let decode = |s: &str| percent_decode_str(s).decode_utf8().ok().map(|c| c.into_owned());
    let mut secret = None;
    let mut issuer_param = None;
    for pair in url.query()?.split('&') {
        let (k, v) = pair.split_once('=')?;
        match k {
            "secret" => secret = decode(v),
            "issuer" => issuer_param = decode(v),
            _ => {}
        }
    }
    Some(KeyUri { issuer: decode(issuer)?, account: decode(account)?, secret: secret?, issuer_param })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape() {
        assert_eq!(
            key_uri("Rampart2FA", "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11", "JBSWY3DPEHPK3PXP"),
            "otpauth://totp/Rampart2FA:6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11?secret=JBSWY3DPEHPK3PXP&issuer=Rampart2FA&algorithm=SHA1&digits=6&period=30"
        );
    }

    #[test]
    fn awkward_labels_round_trip() {
        for (issuer, account) in [
            ("Acme & Sons", "alice:bob@example.com"),
            ("100% Crypto", "a&b=c?d#e/f"),
            ("Zürich Bank", "ユーザー 1"),
            ("a+b", "%41"),
        ] {
            let uri = key_uri(issuer, account, "JBSWY3DPEHPK3PXP");
            assert!(!uri.contains(' '), "{uri}");
            assert_eq!(uri.matches(':').count(), 2, "{uri}"); // scheme and the separator only
            let parsed = parse_key_uri(&uri).unwrap();
            assert_eq!(parsed.issuer, issuer);
            assert_eq!(parsed.account, account);
            assert_eq!(parsed.issuer_param.as_deref(), Some(issuer));
            assert_eq!(parsed.secret, "JBSWY3DPEHPK3PXP");
        }
        assert!(key_uri("Acme & Sons", "x", "S").contains("Acme%20%26%20Sons"));
    }
}
