//! HTML a partner pastes into a page: the script and iframe snippets, and the host page's
//! Content-Security-Policy directives.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::config::WidgetConfig;
use super::options::OptionName;
use super::urls::build_url;
use super::validate::{Target, ValidatedOptions};
use crate::vocab::Environment;

/// The `allow` attribute of the iframe: the features the purchase flow uses.
pub const IFRAME_ALLOW: &str = "payment; camera; microphone; clipboard-write";
/// The `referrerpolicy` of the iframe, stated explicitly rather than left to the browser.
pub const IFRAME_REFERRER_POLICY: &str = "strict-origin-when-cross-origin";
/// The loader under the environment's root: its path carries the major version (`v1`), so
/// it can be served as immutable; the loader takes the widget's root from its own URL (`../`).
pub const SDK_FILE: &str = "v1/rampart.js";

/// Why a snippet could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SnippetError {
    /// The script snippet needs options validated for [`Target::Script`].
    NotScriptTarget,
    /// A CSP nonce must be 1 to 256 base64 characters.
    NonceInvalid,
}

impl SnippetError {
    /// The stable snake_case code.
    pub const fn code(self) -> &'static str {
        match self {
            SnippetError::NotScriptTarget => "snippet_not_script_target",
            SnippetError::NonceInvalid => "snippet_nonce_invalid",
        }
    }

    /// A fixed English message.
    pub const fn message(self) -> &'static str {
        match self {
            SnippetError::NotScriptTarget => {
                "The script snippet needs options validated for the script target (with targetContainerId)."
            }
            SnippetError::NonceInvalid => "A CSP nonce must be 1 to 256 base64 characters.",
        }
    }
}

impl fmt::Display for SnippetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for SnippetError {}

/// Escapes text for an HTML attribute value (double-quoted) or element content.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Makes JSON text inert inside a `<script>` element: `<`, `>` and `&` (which could start a
/// tag, an end tag or a comment) and U+2028/U+2029 (line ends in older JavaScript engines)
/// become `\uXXXX`. In JSON these characters only occur inside strings, where the escape means
/// the same, so the value is unchanged.
pub fn script_safe_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The render call's options as JSON in a fixed order, whatever map type serde_json was built
/// with: option-table order, receive addresses in registry order.
pub fn render_options_json(options: &ValidatedOptions, config: &WidgetConfig) -> String {
    let json = options.to_json();
    let mut out = String::with_capacity(256);
    out.push('{');
    for name in OptionName::ALL {
        let key = name.key(config);
        let Some(value) = json.get(key) else { continue };
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&Value::from(key).to_string());
        out.push(':');
        if name == OptionName::ReceiveAddress {
            out.push('{');
            for (i, (coin, address)) in options.receive_addresses().iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(coin.as_str()).to_string());
                out.push(':');
                out.push_str(&Value::from(address.as_str()).to_string());
            }
            out.push('}');
        } else {
            out.push_str(&value.to_string());
        }
    }
    out.push('}');
    out
}

/// The loader's URL: `<root>/v1/rampart.js`, whatever path the root has.
pub fn sdk_url(environment: Environment, config: &WidgetConfig) -> String {
    let mut url = config.root(environment).clone();
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.pop_if_empty().extend(SDK_FILE.split('/'));
    }
    url.into()
}

/// The script snippet: the container element, the SDK script, the render call and a
/// `<noscript>` link to the canonical URL.
///
/// ```text
/// <div id="{targetContainerId}"></div>
/// <script src="{root}/v1/rampart.js"></script>
/// <script>Rampart.render({options});</script>
/// <noscript><a href="{canonical URL}" target="_blank" rel="noopener noreferrer">Open the Rampart widget</a></noscript>
/// ```
///
/// The SDK is loaded without `async`: the render call right after it must find it loaded.
/// The options are [`ValidatedOptions::to_json`] (what the partner gave, plus `environment`),
/// written by [`render_options_json`].
/// A page whose CSP forbids inline scripts needs [`script_snippet_with_nonce`].
///
/// Every attribute value is HTML-escaped (`&`, `<`, `>`, `"`, `'`), and the options inside the
/// render call are JSON with `<`, `>`, `&`, U+2028 and U+2029 written as `\uXXXX`, so no option
/// value can close the script element or break out of an attribute.
///
/// ```
/// use rampart_core::widget::{iframe_snippet, script_snippet, validate, IframeOptions, Target, WidgetConfig};
///
/// let config = WidgetConfig::default();
/// let options = serde_json::json!({
///     "environment": "sandbox",
///     "publicKey": "pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc",
///     "targetContainerId": "buy",
///     "clientName": "</script><b>"
/// });
/// let validation = validate(options.as_object().unwrap(), Target::Script, None, &config);
/// let options = validation.options.unwrap();
/// let html = script_snippet(&options, &config)?;
/// assert!(html.starts_with("<div id=\"buy\"></div>\n"));
/// assert!(html.contains(r#""clientName":"\u003c/script\u003e\u003cb\u003e""#));
/// assert!(iframe_snippet(&options, &IframeOptions::default(), &config).contains(r#"width="420" height="550""#));
/// # Ok::<(), rampart_core::widget::SnippetError>(())
/// ```
pub fn script_snippet(options: &ValidatedOptions, config: &WidgetConfig) -> Result<String, SnippetError> {
    render_script(options, None, config)
}

/// [`script_snippet`] with a CSP `nonce` attribute on both script elements.
pub fn script_snippet_with_nonce(
    options: &ValidatedOptions,
    nonce: &str,
    config: &WidgetConfig,
) -> Result<String, SnippetError> {
    let ok = !nonce.is_empty()
        && nonce.len() <= 256
        && nonce.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_'));
    if !ok {
        return Err(SnippetError::NonceInvalid);
    }
    render_script(options, Some(nonce), config)
}

fn render_script(
    options: &ValidatedOptions,
    nonce: Option<&str>,
    config: &WidgetConfig,
) -> Result<String, SnippetError> {
    let (Target::Script, Some(container)) = (options.target(), options.target_container_id()) else {
        return Err(SnippetError::NotScriptTarget);
    };
    let nonce = nonce.map(|n| format!(" nonce=\"{}\"", escape_html(n))).unwrap_or_default();
    let brand = escape_html(config.brand());
    let json = script_safe_json(&render_options_json(options, config));
    Ok(format!(
        "<div id=\"{id}\"></div>\n\
         <script src=\"{src}\"{nonce}></script>\n\
         <script{nonce}>{brand}.render({json});</script>\n\
         <noscript><a href=\"{href}\" target=\"_blank\" rel=\"noopener noreferrer\">Open the {brand} widget</a></noscript>\n",
        id = escape_html(container),
        src = escape_html(&sdk_url(options.environment(), config)),
        href = escape_html(&build_url(options, config)),
    ))
}

/// Presentation of the iframe snippet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IframeOptions {
    /// Width in CSS pixels; default 420.
    pub width: u32,
    /// Height in CSS pixels; default 550.
    pub height: u32,
    /// The accessible title; default `"<Brand> purchase widget"`.
    pub title: Option<String>,
    /// Adds `loading="lazy"`; default false.
    pub lazy: bool,
}

impl Default for IframeOptions {
    fn default() -> Self {
        IframeOptions { width: 420, height: 550, title: None, lazy: false }
    }
}

/// The iframe snippet on the canonical URL (works for either target):
///
/// ```text
/// <iframe src="{URL}" title="{title}" width="420" height="550" allow="payment; camera; microphone; clipboard-write" referrerpolicy="strict-origin-when-cross-origin" style="border: 0"></iframe>
/// ```
///
/// with ` loading="lazy"` after `referrerpolicy` when asked.
pub fn iframe_snippet(options: &ValidatedOptions, iframe: &IframeOptions, config: &WidgetConfig) -> String {
    let title = match &iframe.title {
        Some(title) => escape_html(title),
        None => escape_html(&format!("{} purchase widget", config.brand())),
    };
    format!(
        "<iframe src=\"{src}\" title=\"{title}\" width=\"{width}\" height=\"{height}\" allow=\"{allow}\" \
         referrerpolicy=\"{policy}\"{lazy} style=\"border: 0\"></iframe>\n",
        src = escape_html(&build_url(options, config)),
        width = iframe.width,
        height = iframe.height,
        allow = escape_html(IFRAME_ALLOW),
        policy = escape_html(IFRAME_REFERRER_POLICY),
        lazy = if iframe.lazy { " loading=\"lazy\"" } else { "" },
    )
}

/// What the host page's Content-Security-Policy must allow for the widget: the root's origin
/// in `frame-src` (the widget frame) and `script-src` (the SDK). Merge these into the page's
/// own policy; the inline render call also needs a nonce ([`script_snippet_with_nonce`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CspDirectives {
    /// Sources for `frame-src`.
    pub frame_src: String,
    /// Sources for `script-src`.
    pub script_src: String,
}

impl CspDirectives {
    /// `frame-src <origin>; script-src <origin>`.
    pub fn to_header_value(&self) -> String {
        format!("frame-src {}; script-src {}", self.frame_src, self.script_src)
    }
}

/// The CSP directives for an environment's root.
pub fn csp_directives(environment: Environment, config: &WidgetConfig) -> CspDirectives {
    let origin = config.root(environment).origin().ascii_serialization();
    CspDirectives { frame_src: origin.clone(), script_src: origin }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(escape_html(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
        let json = Value::from("</script>&\u{2028}\u{2029}").to_string();
        assert_eq!(script_safe_json(&json), r#""\u003c/script\u003e\u0026\u2028\u2029""#);
    }

    #[test]
    fn sdk_and_csp() {
        let config = WidgetConfig::default();
        assert_eq!(sdk_url(Environment::Production, &config), "https://widget.rampart.network/v1/rampart.js");
        let custom = config.clone().with_sandbox_root("https://example.com:8443/w").expect("valid root");
        assert_eq!(sdk_url(Environment::Sandbox, &custom), "https://example.com:8443/w/v1/rampart.js");
        assert_eq!(
            csp_directives(Environment::Sandbox, &custom).to_header_value(),
            "frame-src https://example.com:8443; script-src https://example.com:8443"
        );
    }
}
