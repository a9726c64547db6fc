//! The token grammar: what a caller may send as a 6-digit code.
//!
//! Trim ASCII white space only, then tolerate one space or hyphen between the third and fourth
//! digit; what remains must be exactly six bytes `0`..=`9`. A JSON integer 0..=999999 is
//! accepted and zero-padded. Absent, null, empty or only white space is [`Token::Missing`].
//! Everything else is [`Token::Malformed`]: it never reaches HMAC, it counts as a failed
//! attempt, and it is answered exactly like a wrong code.

use std::fmt;

/// Inputs longer than this are malformed without further look.
pub const MAX_TOKEN_BYTES: usize = 64;

/// A well-formed 6-digit code, held as its numeric value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Code(u32);

impl Code {
    /// The code's value (0..=999999).
    pub const fn value(self) -> u32 {
        self.0
    }

    /// The code as a value, if it is in 0..=999999.
    pub const fn from_value(v: u32) -> Option<Self> {
        if v <= 999_999 { Some(Self(v)) } else { None }
    }
}

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Code(<redacted>)")
    }
}

/// A token as the caller sent it, classified.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Token {
    /// No token: absent, null, empty or only white space.
    Missing,
    /// Something that is not a 6-digit code; answered as a wrong code.
    Malformed,
    /// A well-formed code.
    Code(Code),
}

impl Token {
    /// Classify a string token.
    pub fn parse(s: &str) -> Self {
        let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
        if t.is_empty() {
            return Self::Missing;
        }
        if s.len() > MAX_TOKEN_BYTES {
            return Self::Malformed;
        }
        let b = t.as_bytes();
        let digits: [u8; 6] = match b.len() {
            6 => [b[0], b[1], b[2], b[3], b[4], b[5]],
            7 if b[3] == b' ' || b[3] == b'-' => [b[0], b[1], b[2], b[4], b[5], b[6]],
            _ => return Self::Malformed,
        };
        if !digits.iter().all(u8::is_ascii_digit) {
            return Self::Malformed;
        }
        let v = digits.iter().fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'));
        Self::Code(Code(v))
    }

    /// Classify an integer token: 0..=999999 is a code (zero-padded), anything else malformed.
    pub fn from_integer(v: i128) -> Self {
        u32::try_from(v).ok().and_then(Code::from_value).map_or(Self::Malformed, Self::Code)
    }

    /// Classify a JSON body field (`None` when the field is absent).
    pub fn from_json(value: Option<&serde_json::Value>) -> Self {
        use serde_json::Value;
        match value {
            None | Some(Value::Null) => Self::Missing,
            Some(Value::String(s)) => Self::parse(s),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) => Self::from_integer(i128::from(v)),
                None => Self::Malformed,
            },
            Some(_) => Self::Malformed,
        }
    }
}

impl From<&str> for Token {
    fn from(s: &str) -> Self {
        Self::parse(s)
    }
}

impl From<&String> for Token {
    fn from(s: &String) -> Self {
        Self::parse(s)
    }
}

impl From<Option<&str>> for Token {
    fn from(s: Option<&str>) -> Self {
        s.map_or(Self::Missing, Self::parse)
    }
}

impl From<u32> for Token {
    fn from(v: u32) -> Self {
        Self::from_integer(i128::from(v))
    }
}
