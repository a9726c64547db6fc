//! Receive-address checks per chain (SPEC section 4, "Receive addresses").
//!
//! ```
//! use rampart_core::widget::address::{validate_address, AddressError, AddressKind, Chain, Network};
//!
//! let info = validate_address(Chain::Bitcoin, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", false)?;
//! assert_eq!((info.network, info.kind), (Network::Mainnet, AddressKind::Segwit { version: 0 }));
//!
//! // One character changed: the error names the check that failed.
//! let err = validate_address(Chain::Bitcoin, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb", false).unwrap_err();
//! assert_eq!(err, AddressError::Base58Checksum);
//! assert_eq!(err.code(), "address_base58_checksum");
//!
//! // Testnet addresses pass only when the caller allows them (the sandbox).
//! let testnet = "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx";
//! assert_eq!(validate_address(Chain::Bitcoin, testnet, false), Err(AddressError::TestnetNotAllowed));
//! assert!(validate_address(Chain::Bitcoin, testnet, true).is_ok());
//! # Ok::<(), AddressError>(())
//! ```
//!
//! What each chain accepts:
//!
//! | chain | mainnet | testnet (only with `allow_testnet`) |
//! |---|---|---|
//! | Bitcoin | base58check version `0x00` (P2PKH), `0x05` (P2SH); segwit `bc` | `0x6f`, `0xc4`; segwit `tb`, `bcrt` (regtest) |
//! | Litecoin | `0x30` (P2PKH), `0x32` and legacy `0x05` (P2SH); segwit `ltc` | `0x6f`, `0x3a`, `0xc4`; segwit `tltc`, `rltc` (regtest) |
//! | Ethereum (and its tokens) | `0x` + 40 hex digits, EIP-55 checksum when mixed case | none: EVM addresses carry no network |
//! | Solana | base58 of exactly 32 bytes | none |
//!
//! Segwit addresses follow BIP-173 as amended by BIP-350: witness version 0 uses the bech32
//! checksum, versions 1 to 16 use bech32m, programs are 2 to 40 bytes (20 or 32 for version 0),
//! and any version up to 16 is a valid recipient. Bitcoin and Litecoin testnet share their
//! base58 version bytes, so such an address is accepted for either chain when testnet is allowed.
//!
//! Input is capped at [`MAX_ADDRESS_LEN`] bytes before any decoding, and only printable ASCII
//! without spaces is considered, so hostile input stays cheap. Nothing is trimmed: surrounding
//! whitespace is an error, not something silently fixed.

use std::fmt;

use bech32::primitives::decode::{ChecksumError, SegwitHrpstring, SegwitHrpstringError, UncheckedHrpstring};
use bech32::{Bech32, Bech32m, Fe32};
use sha2::{Digest, Sha256};
use sha3::Keccak256;

/// Longest input examined, in bytes. The longest supported form (a segwit address) is 90
/// characters; anything past this is rejected before decoding.
pub const MAX_ADDRESS_LEN: usize = 128;

/// Which chain an address belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Chain {
    /// Bitcoin: base58check P2PKH/P2SH and segwit (bech32/bech32m).
    Bitcoin,
    /// Litecoin: base58check P2PKH/P2SH and segwit (bech32/bech32m).
    Litecoin,
    /// Ethereum and the tokens carried on it (usdc, usdt, dai): `0x` + 40 hex digits.
    Ethereum,
    /// Solana: a base58 ed25519 public key of 32 bytes.
    Solana,
}

impl Chain {
    /// Every chain.
    pub const ALL: [Chain; 4] = [Chain::Bitcoin, Chain::Litecoin, Chain::Ethereum, Chain::Solana];

    /// The stable lowercase name: `"bitcoin"`, `"litecoin"`, `"ethereum"`, `"solana"`.
    pub fn name(self) -> &'static str {
        match self {
            Chain::Bitcoin => "bitcoin",
            Chain::Litecoin => "litecoin",
            Chain::Ethereum => "ethereum",
            Chain::Solana => "solana",
        }
    }

    /// The chain with this exact [`name`](Chain::name), if any.
    pub fn from_name(name: &str) -> Option<Chain> {
        Chain::ALL.into_iter().find(|chain| chain.name() == name)
    }
}

impl fmt::Display for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The network an address is for. Regtest addresses count as testnet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Network {
    /// Real funds.
    Mainnet,
    /// Test funds (testnet, signet or regtest).
    Testnet,
}

impl Network {
    /// The stable lowercase name: `"mainnet"` or `"testnet"`.
    pub fn name(self) -> &'static str {
        match self {
            Network::Mainnet => "mainnet",
            Network::Testnet => "testnet",
        }
    }
}

/// What a valid address is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressKind {
    /// Base58check pay-to-public-key-hash.
    P2pkh,
    /// Base58check pay-to-script-hash.
    P2sh,
    /// Native segwit with its witness version (0 to 16; 1 is taproot).
    Segwit {
        /// The witness version, 0 to 16.
        version: u8,
    },
    /// An EVM account address (Ethereum and its tokens).
    Evm,
    /// A Solana public key.
    Solana,
}

impl AddressKind {
    /// The stable name used in the shared test vectors: `"p2pkh"`, `"p2sh"`, `"segwit_v0"` to
    /// `"segwit_v16"`, `"evm"`, `"solana"`.
    pub fn name(self) -> &'static str {
        const SEGWIT: [&str; 17] = [
            "segwit_v0",
            "segwit_v1",
            "segwit_v2",
            "segwit_v3",
            "segwit_v4",
            "segwit_v5",
            "segwit_v6",
            "segwit_v7",
            "segwit_v8",
            "segwit_v9",
            "segwit_v10",
            "segwit_v11",
            "segwit_v12",
            "segwit_v13",
            "segwit_v14",
            "segwit_v15",
            "segwit_v16",
        ];
        match self {
            AddressKind::P2pkh => "p2pkh",
            AddressKind::P2sh => "p2sh",
            // Versions above 16 are never constructed; the fallback only keeps this total.
            AddressKind::Segwit { version } => SEGWIT.get(usize::from(version)).copied().unwrap_or("segwit"),
            AddressKind::Evm => "evm",
            AddressKind::Solana => "solana",
        }
    }
}

/// A valid address: its chain, network and kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AddressInfo {
    /// The chain it was validated for.
    pub chain: Chain,
    /// Mainnet, or testnet (including regtest).
    pub network: Network,
    /// The address form.
    pub kind: AddressKind,
}

/// Why an address failed: names the check that failed.
///
/// Each variant has a stable snake_case [`code`](AddressError::code) and a fixed English
/// [`message`](AddressError::message); neither carries the address text. Of the checks that
/// apply to a chain, the first failing one in this order is reported.
///
/// | code | check |
/// |---|---|
/// | `address_empty` | the address is empty |
/// | `address_too_long` | over [`MAX_ADDRESS_LEN`] bytes |
/// | `address_bad_character` | whitespace, control or non-ASCII characters |
/// | `address_wrong_chain` | fails this chain's checks but is a valid address of another supported chain |
/// | `address_base58_encoding` | a character outside the base58 alphabet (`0`, `O`, `I`, `l` are excluded) |
/// | `address_base58_length` | base58check payload is not version byte + 20-byte hash |
/// | `address_base58_checksum` | base58check checksum (double SHA-256) mismatch |
/// | `address_version_byte` | version byte is not a P2PKH/P2SH byte of the chain |
/// | `address_hrp` | bech32 prefix is not a segwit prefix of the chain |
/// | `address_bech32_encoding` | not well-formed bech32: character, mixed case, no data, length |
/// | `address_witness_version` | witness version above 16 |
/// | `address_bech32_checksum` | matches neither the bech32 nor the bech32m checksum |
/// | `address_bech32_padding` | witness program has bad padding bits |
/// | `address_witness_program_length` | witness program length breaks the BIP-141 rules |
/// | `address_bech32_variant` | checksum is the wrong variant for the witness version (BIP-350) |
/// | `address_evm_format` | not `0x` + 40 hex digits |
/// | `address_eip55_checksum` | mixed-case hex that does not match EIP-55 |
/// | `address_solana_length` | base58 that does not decode to 32 bytes |
/// | `address_testnet_not_allowed` | a testnet address where only mainnet is allowed |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum AddressError {
    /// The address is empty.
    Empty,
    /// The address is longer than [`MAX_ADDRESS_LEN`] bytes.
    TooLong,
    /// The address holds whitespace, control or non-ASCII characters.
    BadCharacter,
    /// The address fails this chain's checks but is valid for another supported chain.
    WrongChain,
    /// A character outside the base58 alphabet.
    Base58Encoding,
    /// The base58 payload is not 25 bytes (version, 20-byte hash, 4-byte checksum).
    Base58Length,
    /// The base58check checksum does not match.
    Base58Checksum,
    /// The version byte is not a P2PKH or P2SH byte of this chain.
    VersionByte,
    /// The bech32 human-readable prefix is not a segwit prefix of this chain.
    Hrp,
    /// Not well-formed bech32: bad character, mixed case, no data or too long.
    Bech32Encoding,
    /// The witness version is above 16.
    WitnessVersion,
    /// Neither the bech32 nor the bech32m checksum matches.
    Bech32Checksum,
    /// The witness program has more than 4 padding bits or non-zero padding.
    Bech32Padding,
    /// The witness program is not 2 to 40 bytes, or not 20 or 32 bytes for version 0.
    WitnessProgramLength,
    /// Bech32 used for witness version 1 or above, or bech32m for version 0 (BIP-350).
    Bech32Variant,
    /// Not `0x` followed by 40 hex digits.
    EvmFormat,
    /// Mixed-case hex that does not match its EIP-55 checksum.
    Eip55Checksum,
    /// Base58 that does not decode to a 32-byte public key.
    SolanaLength,
    /// A testnet address where only mainnet addresses are accepted.
    TestnetNotAllowed,
}

impl AddressError {
    /// Every error, in the order the checks run.
    pub const ALL: [AddressError; 19] = [
        AddressError::Empty,
        AddressError::TooLong,
        AddressError::BadCharacter,
        AddressError::WrongChain,
        AddressError::Base58Encoding,
        AddressError::Base58Length,
        AddressError::Base58Checksum,
        AddressError::VersionByte,
        AddressError::Hrp,
        AddressError::Bech32Encoding,
        AddressError::WitnessVersion,
        AddressError::Bech32Checksum,
        AddressError::Bech32Padding,
        AddressError::WitnessProgramLength,
        AddressError::Bech32Variant,
        AddressError::EvmFormat,
        AddressError::Eip55Checksum,
        AddressError::SolanaLength,
        AddressError::TestnetNotAllowed,
    ];

    /// The stable snake_case code, for example `"address_base58_checksum"`.
    pub fn code(self) -> &'static str {
        match self {
            AddressError::Empty => "address_empty",
            AddressError::TooLong => "address_too_long",
            AddressError::BadCharacter => "address_bad_character",
            AddressError::WrongChain => "address_wrong_chain",
            AddressError::Base58Encoding => "address_base58_encoding",
            AddressError::Base58Length => "address_base58_length",
            AddressError::Base58Checksum => "address_base58_checksum",
            AddressError::VersionByte => "address_version_byte",
            AddressError::Hrp => "address_hrp",
            AddressError::Bech32Encoding => "address_bech32_encoding",
            AddressError::WitnessVersion => "address_witness_version",
            AddressError::Bech32Checksum => "address_bech32_checksum",
            AddressError::Bech32Variant => "address_bech32_variant",
            AddressError::Bech32Padding => "address_bech32_padding",
            AddressError::WitnessProgramLength => "address_witness_program_length",
            AddressError::EvmFormat => "address_evm_format",
            AddressError::Eip55Checksum => "address_eip55_checksum",
            AddressError::SolanaLength => "address_solana_length",
            AddressError::TestnetNotAllowed => "address_testnet_not_allowed",
        }
    }

    /// The error with this [`code`](AddressError::code), if any.
    pub fn from_code(code: &str) -> Option<AddressError> {
        AddressError::ALL.into_iter().find(|error| error.code() == code)
    }

    /// A fixed English message for the partner; it never contains the address.
    pub fn message(self) -> &'static str {
        match self {
            AddressError::Empty => "The address is empty.",
            AddressError::TooLong => "The address is longer than any supported address format.",
            AddressError::BadCharacter => "The address contains spaces, control characters or non-ASCII characters.",
            AddressError::WrongChain => "The address is valid for a different chain than the one it was given for.",
            AddressError::Base58Encoding => {
                "The address contains a character that is not in the base58 alphabet (0, O, I and l are never used)."
            }
            AddressError::Base58Length => {
                "The base58 address has the wrong length: it must hold a version byte, a 20-byte hash and a checksum."
            }
            AddressError::Base58Checksum => "The base58 checksum does not match: the address is mistyped or corrupted.",
            AddressError::VersionByte => "The address version byte is not a P2PKH or P2SH prefix of this chain.",
            AddressError::Hrp => "The address prefix is not a segwit prefix of this chain.",
            AddressError::Bech32Encoding => {
                "The segwit address is not well-formed bech32: a bad character, mixed case, no data or too long."
            }
            AddressError::WitnessVersion => "The segwit witness version is above 16.",
            AddressError::Bech32Checksum => "The bech32 checksum does not match: the address is mistyped or corrupted.",
            AddressError::Bech32Variant => {
                "The segwit address uses the wrong checksum: version 0 needs bech32, versions 1 to 16 need bech32m."
            }
            AddressError::Bech32Padding => "The segwit witness program has invalid padding bits.",
            AddressError::WitnessProgramLength => {
                "The segwit witness program has the wrong length: 2 to 40 bytes, and 20 or 32 bytes for version 0."
            }
            AddressError::EvmFormat => "The address is not 0x followed by 40 hexadecimal digits.",
            AddressError::Eip55Checksum => {
                "The mixed-case address does not match its EIP-55 checksum: the address is mistyped or corrupted."
            }
            AddressError::SolanaLength => "The Solana address does not decode to a 32-byte public key.",
            AddressError::TestnetNotAllowed => "Testnet addresses are accepted only in the sandbox environment.",
        }
    }
}

impl fmt::Display for AddressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// Checks `address` for `chain`, checksum included.
///
/// `allow_testnet`: testnet (and regtest) addresses are accepted only when true (sandbox).
/// On failure the error names the check that failed; see [`AddressError`].
pub fn validate_address(chain: Chain, address: &str, allow_testnet: bool) -> Result<AddressInfo, AddressError> {
    check_text(address)?;
    let info = match parse(chain, address) {
        Ok(info) => info,
        // A valid address of another chain is the likelier mistake than a typo; say so.
        Err(error) => {
            let elsewhere = Chain::ALL.into_iter().any(|other| other != chain && parse(other, address).is_ok());
            return Err(if elsewhere { AddressError::WrongChain } else { error });
        }
    };
    if info.network == Network::Testnet && !allow_testnet {
        return Err(AddressError::TestnetNotAllowed);
    }
    Ok(info)
}

/// Checks every format needs: non-empty, bounded, printable ASCII without spaces.
fn check_text(address: &str) -> Result<(), AddressError> {
    if address.is_empty() {
        return Err(AddressError::Empty);
    }
    if address.len() > MAX_ADDRESS_LEN {
        return Err(AddressError::TooLong);
    }
    if !address.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(AddressError::BadCharacter);
    }
    Ok(())
}

/// The chain's own format checks, without the cross-chain and testnet policy.
fn parse(chain: Chain, address: &str) -> Result<AddressInfo, AddressError> {
    match chain {
        Chain::Bitcoin | Chain::Litecoin => parse_utxo(chain, address),
        Chain::Ethereum => parse_evm(address),
        Chain::Solana => parse_solana(address),
    }
}

/// Segwit prefixes (human-readable part and separator) per chain.
const SEGWIT_PREFIXES: [(Chain, &str, Network); 6] = [
    (Chain::Bitcoin, "bc1", Network::Mainnet),
    (Chain::Bitcoin, "tb1", Network::Testnet),
    (Chain::Bitcoin, "bcrt1", Network::Testnet),
    (Chain::Litecoin, "ltc1", Network::Mainnet),
    (Chain::Litecoin, "tltc1", Network::Testnet),
    (Chain::Litecoin, "rltc1", Network::Testnet),
];

/// The network of the segwit prefix `address` starts with, if it is one of the chain's.
fn segwit_network(chain: Chain, address: &str) -> Option<Network> {
    SEGWIT_PREFIXES.into_iter().find_map(|(prefix_chain, prefix, network)| {
        let starts = address.get(..prefix.len()).is_some_and(|head| head.eq_ignore_ascii_case(prefix));
        (prefix_chain == chain && starts).then_some(network)
    })
}

/// The network and kind of a base58check version byte on a Bitcoin-like chain.
fn version_byte(chain: Chain, version: u8) -> Option<(Network, AddressKind)> {
    match (chain, version) {
        (Chain::Bitcoin, 0x00) | (Chain::Litecoin, 0x30) => Some((Network::Mainnet, AddressKind::P2pkh)),
        // Litecoin still accepts the P2SH byte it shared with Bitcoin before 0x32.
        (Chain::Bitcoin, 0x05) | (Chain::Litecoin, 0x32 | 0x05) => Some((Network::Mainnet, AddressKind::P2sh)),
        (Chain::Bitcoin | Chain::Litecoin, 0x6f) => Some((Network::Testnet, AddressKind::P2pkh)),
        (Chain::Bitcoin | Chain::Litecoin, 0xc4) | (Chain::Litecoin, 0x3a) => {
            Some((Network::Testnet, AddressKind::P2sh))
        }
        _ => None,
    }
}

fn parse_utxo(chain: Chain, address: &str) -> Result<AddressInfo, AddressError> {
    // No base58 address of these chains starts with a segwit prefix: their first characters
    // are fixed by the version bytes (1, 3, m, n, 2, L, M, Q).
    if let Some(network) = segwit_network(chain, address) {
        return parse_segwit(chain, network, address);
    }
    match bs58::decode(address).into_vec() {
        Ok(bytes) => parse_base58check(chain, &bytes),
        // Letters, '1', then something that is not base58: bech32 with a prefix not of this chain.
        Err(_) if address.split_once('1').is_some_and(|(hrp, _)| is_hrp_like(hrp)) => Err(AddressError::Hrp),
        Err(_) => Err(AddressError::Base58Encoding),
    }
}

fn is_hrp_like(hrp: &str) -> bool {
    !hrp.is_empty() && hrp.bytes().all(|b| b.is_ascii_alphabetic())
}

fn parse_base58check(chain: Chain, bytes: &[u8]) -> Result<AddressInfo, AddressError> {
    let Ok(bytes) = <&[u8; 25]>::try_from(bytes) else {
        return Err(AddressError::Base58Length);
    };
    let (payload, checksum) = bytes.split_at(21);
    let digest = Sha256::digest(Sha256::digest(payload));
    if digest.get(..4) != Some(checksum) {
        return Err(AddressError::Base58Checksum);
    }
    let [version, ..] = *bytes;
    let (network, kind) = version_byte(chain, version).ok_or(AddressError::VersionByte)?;
    Ok(AddressInfo { chain, network, kind })
}

fn parse_segwit(chain: Chain, network: Network, address: &str) -> Result<AddressInfo, AddressError> {
    match SegwitHrpstring::new(address) {
        Ok(segwit) => {
            Ok(AddressInfo { chain, network, kind: AddressKind::Segwit { version: segwit.witness_version().to_u8() } })
        }
        Err(SegwitHrpstringError::Checksum(ChecksumError::InvalidResidue)) => Err(diagnose_checksum(address)),
        Err(error) => Err(segwit_error(&error)),
    }
}

/// Tells a corrupted checksum from the right checksum of the wrong variant (BIP-350).
fn diagnose_checksum(address: &str) -> AddressError {
    let Ok(unchecked) = UncheckedHrpstring::new(address) else {
        return AddressError::Bech32Encoding;
    };
    let version = unchecked.data_part_ascii().first().and_then(|&b| Fe32::from_char(char::from(b)).ok());
    let other_variant = if version == Some(Fe32::Q) {
        unchecked.validate_and_remove_checksum::<Bech32m>()
    } else {
        unchecked.validate_and_remove_checksum::<Bech32>()
    };
    match other_variant {
        // Report a structural fault ahead of the variant: it would fail under either checksum.
        Ok(checked) => match checked.validate_segwit() {
            Ok(_) => AddressError::Bech32Variant,
            Err(error) => segwit_error(&error),
        },
        Err(_) => AddressError::Bech32Checksum,
    }
}

fn segwit_error(error: &SegwitHrpstringError) -> AddressError {
    match error {
        SegwitHrpstringError::InvalidWitnessVersion(_) => AddressError::WitnessVersion,
        SegwitHrpstringError::Padding(_) => AddressError::Bech32Padding,
        SegwitHrpstringError::WitnessLength(_) => AddressError::WitnessProgramLength,
        SegwitHrpstringError::Checksum(ChecksumError::InvalidResidue) => AddressError::Bech32Checksum,
        _ => AddressError::Bech32Encoding,
    }
}

fn parse_evm(address: &str) -> Result<AddressInfo, AddressError> {
    let hex = address.strip_prefix("0x").ok_or(AddressError::EvmFormat)?;
    if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(AddressError::EvmFormat);
    }
    let upper = hex.bytes().any(|b| b.is_ascii_uppercase());
    let lower = hex.bytes().any(|b| b.is_ascii_lowercase());
    // All-lower and all-upper hex carry no checksum and are accepted as they are.
    if upper && lower && !matches_eip55(hex) {
        return Err(AddressError::Eip55Checksum);
    }
    Ok(AddressInfo { chain: Chain::Ethereum, network: Network::Mainnet, kind: AddressKind::Evm })
}

/// EIP-55: a letter is upper case exactly when the matching nibble of keccak256(lowercase hex) is 8 or more.
fn matches_eip55(hex: &str) -> bool {
    let hash = Keccak256::digest(hex.to_ascii_lowercase().as_bytes());
    let nibbles = hash.iter().flat_map(|byte| [byte >> 4, byte & 0x0f]);
    hex.bytes().zip(nibbles).all(|(b, nibble)| !b.is_ascii_alphabetic() || b.is_ascii_uppercase() == (nibble >= 8))
}

fn parse_solana(address: &str) -> Result<AddressInfo, AddressError> {
    // Decode in full rather than onto a 32-byte buffer, so a bad character is reported even
    // when the input is also too long.
    match bs58::decode(address).into_vec() {
        Ok(key) if key.len() == 32 => {
            Ok(AddressInfo { chain: Chain::Solana, network: Network::Mainnet, kind: AddressKind::Solana })
        }
        Ok(_) => Err(AddressError::SolanaLength),
        Err(_) => Err(AddressError::Base58Encoding),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_error_once() {
        // Exhaustive on purpose: a new variant must be added here and to `ALL`.
        fn position(error: AddressError) -> usize {
            match error {
                AddressError::Empty => 0,
                AddressError::TooLong => 1,
                AddressError::BadCharacter => 2,
                AddressError::WrongChain => 3,
                AddressError::Base58Encoding => 4,
                AddressError::Base58Length => 5,
                AddressError::Base58Checksum => 6,
                AddressError::VersionByte => 7,
                AddressError::Hrp => 8,
                AddressError::Bech32Encoding => 9,
                AddressError::WitnessVersion => 10,
                AddressError::Bech32Checksum => 11,
                AddressError::Bech32Padding => 12,
                AddressError::WitnessProgramLength => 13,
                AddressError::Bech32Variant => 14,
                AddressError::EvmFormat => 15,
                AddressError::Eip55Checksum => 16,
                AddressError::SolanaLength => 17,
                AddressError::TestnetNotAllowed => 18,
            }
        }
        for (index, error) in AddressError::ALL.into_iter().enumerate() {
            assert_eq!(position(error), index, "{error:?}");
            assert_eq!(AddressError::from_code(error.code()), Some(error));
            assert_eq!(error.to_string(), error.message());
        }
    }

    #[test]
    fn names_round_trip() {
        for chain in Chain::ALL {
            assert_eq!(Chain::from_name(chain.name()), Some(chain));
        }
        assert_eq!(Chain::from_name("Bitcoin"), None);
        assert_eq!(AddressKind::Segwit { version: 16 }.name(), "segwit_v16");
        assert_eq!(Network::Testnet.name(), "testnet");
    }

    #[test]
    fn checks_text_before_decoding() {
        let long = "1".repeat(MAX_ADDRESS_LEN + 1);
        for chain in Chain::ALL {
            assert_eq!(validate_address(chain, "", true), Err(AddressError::Empty));
            assert_eq!(validate_address(chain, &long, true), Err(AddressError::TooLong));
            assert_eq!(
                validate_address(chain, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa\n", true),
                Err(AddressError::BadCharacter)
            );
            assert_eq!(
                validate_address(chain, "0x52908400098527886E0F7030069857D2E4169Eé7", true),
                Err(AddressError::BadCharacter)
            );
        }
    }

    #[test]
    fn eip55_rule_matches_the_published_examples() {
        for hex in ["5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "fB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"] {
            assert!(matches_eip55(hex));
            assert!(!matches_eip55(&hex.to_ascii_lowercase()));
        }
    }

    #[test]
    fn tells_checksum_variant_from_corruption() {
        // BIP-350: taproot program encoded with bech32 instead of bech32m.
        let bech32_v1 = "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd";
        assert_eq!(validate_address(Chain::Bitcoin, bech32_v1, false), Err(AddressError::Bech32Variant));
        let corrupted = "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj2";
        assert_eq!(validate_address(Chain::Bitcoin, corrupted, false), Err(AddressError::Bech32Checksum));
    }
}
