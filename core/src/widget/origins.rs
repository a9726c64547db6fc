//! Who may embed the widget (SPEC section 6.2): a partner's registered embedding origins, the
//! policy per environment, and the `frame-ancestors` value the widget page sends.
//!
//! An origin is `scheme://host[:port]` exactly: http or https, a host, an optional port, and
//! nothing else (no path, query, fragment, credentials or wildcard; a lone trailing `/` is
//! tolerated). It is stored in the
//! serialisation browsers give `event.origin` (lower-case scheme and host, punycode, the
//! default port left out), so a stored origin compares byte for byte with a message's origin.
//!
//! ```
//! use rampart_core::Environment;
//! use rampart_core::widget::origins::{check_origins, frame_ancestors};
//!
//! let origins = check_origins(&["https://Shop.Example.com:443", "http://localhost:3000"], Environment::Sandbox)?;
//! assert_eq!(origins, ["https://shop.example.com", "http://localhost:3000"]);
//! assert_eq!(
//!     frame_ancestors(&origins, Environment::Sandbox),
//!     "frame-ancestors https://shop.example.com http://localhost:3000 http://localhost:* http://127.0.0.1:*"
//! );
//! assert_eq!(frame_ancestors(&[], Environment::Production), "frame-ancestors 'none'");
//! # Ok::<(), rampart_core::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::vocab::Environment;

/// Most origins a partner may register.
pub const MAX_ORIGINS: usize = 20;

/// Longest origin accepted, in bytes.
pub const MAX_ORIGIN_BYTES: usize = 253 + "https://".len() + ":65535".len();

/// What sandbox allows besides the registered origins: any port of the local machine, so a
/// partner's development server can embed the sandbox widget without registering.
pub const SANDBOX_LOCAL_SOURCES: [&str; 2] = ["http://localhost:*", "http://127.0.0.1:*"];

/// The canonical form of one origin, or why it is not one. `environment` decides the schemes:
/// production takes only https.
pub fn canonical_origin(text: &str, environment: Environment) -> std::result::Result<String, &'static str> {
    const NOT_AN_ORIGIN: &str = "must be an origin: http(s)://host[:port], without path, query or credentials";
    if text.is_empty() || text.len() > MAX_ORIGIN_BYTES || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(NOT_AN_ORIGIN);
    }
    if text.contains('*') {
        return Err("must not hold a wildcard: register each origin");
    }
    let url = url::Url::parse(text).map_err(|_| NOT_AN_ORIGIN)?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(NOT_AN_ORIGIN);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(NOT_AN_ORIGIN);
    }
    // The parser gives an empty path as "/"; a typed lone "/" (a common copy) is let through.
    if url.path() != "/" || text.ends_with("//") || url.query().is_some() || url.fragment().is_some() {
        return Err(NOT_AN_ORIGIN);
    }
    if environment == Environment::Production && url.scheme() != "https" {
        return Err("must be https in production");
    }
    Ok(url.origin().ascii_serialization())
}

/// Check a list of origins for a partner of `environment`: at most [`MAX_ORIGINS`], each one
/// an origin ([`canonical_origin`]), none twice. Returns them canonical, in the given order;
/// an error names the index (`widgetOrigins[2] must be https in production`).
pub fn check_origins<S: AsRef<str>>(origins: &[S], environment: Environment) -> Result<Vec<String>> {
    if origins.len() > MAX_ORIGINS {
        return Err(Error::invalid_input("widgetOrigins", "may list at most 20 origins"));
    }
    let mut out: Vec<String> = Vec::with_capacity(origins.len());
    for (i, text) in origins.iter().enumerate() {
        let field = format!("widgetOrigins[{i}]");
        let origin = canonical_origin(text.as_ref(), environment).map_err(|rule| Error::invalid_input(&field, rule))?;
        if let Some(first) = out.iter().position(|o| *o == origin) {
            return Err(Error::invalid_input(&field, &format!("is the same origin as widgetOrigins[{first}]")));
        }
        out.push(origin);
    }
    Ok(out)
}

/// Whether the widget page may talk to a parent page at `origin` (a browser's `event.origin`):
/// a registered origin, or in sandbox any port of `localhost` or `127.0.0.1` over http.
pub fn origin_allowed(origin: &str, registered: &[String], environment: Environment) -> bool {
    if registered.iter().any(|r| r == origin) {
        return true;
    }
    environment == Environment::Sandbox
        && ["http://localhost", "http://127.0.0.1"].iter().any(|local| {
            origin
                .strip_prefix(local)
                .is_some_and(|rest| rest.is_empty() || rest.strip_prefix(':').is_some_and(is_port))
        })
}

fn is_port(text: &str) -> bool {
    !text.is_empty() && text.len() <= 5 && text.bytes().all(|b| b.is_ascii_digit()) && text.parse::<u16>().is_ok()
}

/// The `Content-Security-Policy` directive the widget page sends for a partner: its registered
/// origins, plus the local machine in sandbox; `'none'` when that leaves nothing.
pub fn frame_ancestors(registered: &[String], environment: Environment) -> String {
    let mut sources: Vec<&str> = registered.iter().map(String::as_str).collect();
    if environment == Environment::Sandbox {
        sources.extend(SANDBOX_LOCAL_SOURCES);
    }
    if sources.is_empty() {
        "frame-ancestors 'none'".to_owned()
    } else {
        format!("frame-ancestors {}", sources.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Environment = Environment::Sandbox;
    const P: Environment = Environment::Production;

    #[test]
    fn origins_are_canonical() {
        for (given, want) in [
            ("https://shop.example.com", "https://shop.example.com"),
            ("HTTPS://Shop.EXAMPLE.com", "https://shop.example.com"),
            ("https://shop.example.com:443", "https://shop.example.com"),
            ("https://shop.example.com/", "https://shop.example.com"),
            ("https://shop.example.com:8443", "https://shop.example.com:8443"),
            ("https://bücher.example", "https://xn--bcher-kva.example"),
            ("https://[::1]:9000", "https://[::1]:9000"),
            ("https://203.0.113.7", "https://203.0.113.7"),
        ] {
            assert_eq!(canonical_origin(given, P).as_deref(), Ok(want), "{given}");
        }
        assert_eq!(canonical_origin("http://localhost:3000", S).as_deref(), Ok("http://localhost:3000"));
        assert_eq!(canonical_origin("http://shop.example.com", S).as_deref(), Ok("http://shop.example.com"));
    }

    #[test]
    fn what_is_not_an_origin() {
        for bad in [
            "",
            "shop.example.com",
            "https://",
            "https://shop.example.com//",
            "https://shop.example.com/path",
            "https://shop.example.com?x=1",
            "https://shop.example.com#top",
            "https://user@shop.example.com",
            "https://user:pw@shop.example.com",
            "ftp://shop.example.com",
            "javascript:alert(1)",
            "data:text/html,x",
            " https://shop.example.com",
            "https://shop.example.com\n",
            "null",
        ] {
            assert!(canonical_origin(bad, S).is_err(), "{bad:?}");
        }
        assert_eq!(canonical_origin("https://*.example.com", S), Err("must not hold a wildcard: register each origin"));
        assert_eq!(canonical_origin("*", S), Err("must not hold a wildcard: register each origin"));
        assert_eq!(canonical_origin("http://shop.example.com", P), Err("must be https in production"));
        assert_eq!(canonical_origin("http://localhost:3000", P), Err("must be https in production"));
    }

    #[test]
    fn lists_name_the_index() {
        let message = |list: &[&str], env| check_origins(list, env).unwrap_err().message().to_owned();
        assert_eq!(
            message(&["https://a.example", "http://b.example"], P),
            "widgetOrigins[1] must be https in production"
        );
        assert_eq!(
            message(&["https://a.example", "https://b.example/x"], S),
            "widgetOrigins[1] must be an origin: http(s)://host[:port], without path, query or credentials"
        );
        assert_eq!(
            message(&["https://a.example", "HTTPS://A.example:443"], S),
            "widgetOrigins[1] is the same origin as widgetOrigins[0]"
        );
        let many: Vec<String> = (0..21).map(|i| format!("https://s{i}.example")).collect();
        assert_eq!(check_origins(&many, S).unwrap_err().message(), "widgetOrigins may list at most 20 origins");
        assert_eq!(check_origins(&many[..20], S).unwrap().len(), 20);
        assert_eq!(check_origins::<&str>(&[], P).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn who_may_talk_to_the_page() {
        let registered = vec!["https://shop.example.com".to_owned()];
        assert!(origin_allowed("https://shop.example.com", &registered, P));
        assert!(!origin_allowed("https://shop.example.com:444", &registered, P));
        assert!(!origin_allowed("http://shop.example.com", &registered, P));
        assert!(origin_allowed("http://localhost:5173", &registered, S));
        assert!(origin_allowed("http://127.0.0.1", &registered, S));
        assert!(!origin_allowed("http://localhost:5173", &registered, P));
        assert!(!origin_allowed("http://localhost.evil.example", &registered, S));
        assert!(!origin_allowed("http://localhost:99999", &registered, S));
        assert!(!origin_allowed("http://127.0.0.1:80x", &registered, S));
        assert!(!origin_allowed("null", &registered, S));
    }

    #[test]
    fn frame_ancestors_per_environment() {
        let registered = vec!["https://a.example".to_owned(), "https://b.example:8443".to_owned()];
        assert_eq!(frame_ancestors(&registered, P), "frame-ancestors https://a.example https://b.example:8443");
        assert_eq!(
            frame_ancestors(&registered, S),
            "frame-ancestors https://a.example https://b.example:8443 http://localhost:* http://127.0.0.1:*"
        );
        assert_eq!(frame_ancestors(&[], S), "frame-ancestors http://localhost:* http://127.0.0.1:*");
        assert_eq!(frame_ancestors(&[], P), "frame-ancestors 'none'");
    }
}
