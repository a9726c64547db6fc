//! The embeddable purchase widget (SPEC section 4): options, validation, canonical and signed
//! URLs, snippets, and receive-address checks.

pub mod address;
