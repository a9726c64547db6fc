//! What the C ABI adds to a verify: the pure helper called directly in Rust (secret already
//! decoded), the same with the base32 decoding the ABI does on every call, and
//! `rampart_totp_verify` itself (C strings in, panic boundary, last-error bookkeeping), and
//! `rampart_totp_verify_secret` with a handle decoded and keyed once, and that call with a
//! missing token (no HMAC: the cost of the boundary alone).
//! `ffi/bench/verify.c` (`make c-bench`) sets it beside liboath from C.

use std::ffi::CStr;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rampart::totp::{
    rampart_totp_secret_free, rampart_totp_secret_from_base32, rampart_totp_verify, rampart_totp_verify_secret,
};
use rampart_core::Token;
use rampart_core::totp::{self, Secret};

const NOW: u64 = 1_700_000_000;
const SECRET: &CStr = c"GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

fn verify(c: &mut Criterion) {
    let text = SECRET.to_str().unwrap();
    let secret = Secret::from_base32(text).unwrap();
    let valid = std::ffi::CString::new(totp::code_at(&secret, NOW)).unwrap();
    let invalid = if valid.as_bytes() == b"000000" { c"111111" } else { c"000000" };
    let mut handle = std::ptr::null_mut();
    // SAFETY: a NUL-terminated string and a writable out-pointer.
    let status = unsafe { rampart_totp_secret_from_base32(SECRET.as_ptr(), &mut handle) };
    assert_eq!(status, rampart::rampart_status::RAMPART_OK);
    let mut g = c.benchmark_group("verify_window1_abi");
    for (name, code) in [("valid", valid.as_c_str()), ("invalid", invalid)] {
        let code_text = code.to_str().unwrap();
        g.bench_function(format!("rust_decoded_secret_{name}"), |b| {
            b.iter(|| totp::verify(black_box(&secret), Token::parse(black_box(code_text)), black_box(NOW), 1))
        });
        g.bench_function(format!("rust_base32_secret_{name}"), |b| {
            b.iter(|| {
                let s = Secret::from_base32(black_box(text)).unwrap();
                totp::verify(&s, Token::parse(black_box(code_text)), black_box(NOW), 1)
            })
        });
        g.bench_function(format!("c_abi_rampart_totp_verify_{name}"), |b| {
            b.iter(|| {
                let mut accepted = false;
                // SAFETY: NUL-terminated strings that outlive the call; a writable bool.
                let status = unsafe {
                    rampart_totp_verify(
                        black_box(SECRET.as_ptr()),
                        black_box(code.as_ptr()),
                        black_box(NOW),
                        1,
                        &mut accepted,
                        std::ptr::null_mut(),
                    )
                };
                (status, accepted)
            })
        });
        g.bench_function(format!("c_abi_rampart_totp_verify_secret_{name}"), |b| {
            b.iter(|| {
                let mut accepted = false;
                // SAFETY: a live handle, a NUL-terminated string that outlives the call, a
                // writable bool.
                let status = unsafe {
                    rampart_totp_verify_secret(
                        black_box(handle),
                        black_box(code.as_ptr()),
                        black_box(NOW),
                        1,
                        &mut accepted,
                        std::ptr::null_mut(),
                    )
                };
                (status, accepted)
            })
        });
    }
    // The boundary alone: a NULL token is a missing token, answered before any HMAC, so this
    // is the panic boundary, the argument checks, the last-error reset and the writes.
    g.bench_function("c_abi_boundary_only_missing_token", |b| {
        b.iter(|| {
            let mut accepted = false;
            // SAFETY: a live handle, NULL token (allowed), a writable bool.
            let status = unsafe {
                rampart_totp_verify_secret(
                    black_box(handle),
                    black_box(std::ptr::null()),
                    black_box(NOW),
                    1,
                    &mut accepted,
                    std::ptr::null_mut(),
                )
            };
            (status, accepted)
        })
    });
    g.finish();
    // SAFETY: the handle made above, freed once.
    unsafe { rampart_totp_secret_free(handle) };
}

criterion_group!(benches, verify);
criterion_main!(benches);
