//! Library strings: allocated by Rampart, handed to C, freed (and zeroized) only by
//! `rampart_string_free`.

use std::ffi::{CString, c_char};

use rampart_core::{Error, ErrorKind};
use zeroize::Zeroize;

use crate::boundary::value_call;

/// A library string holding a copy of `text`.
///
/// The copy is made into an allocation of exactly the final size, so no reallocation leaves a
/// stray copy of a secret behind.
pub(crate) fn library_string(text: &str) -> Result<*mut c_char, Error> {
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend_from_slice(text.as_bytes());
    match CString::new(bytes) {
        Ok(c) => Ok(c.into_raw()),
        Err(e) => {
            // Nothing Rampart returns holds a NUL; wipe the copy all the same.
            e.into_vec().zeroize();
            Err(Error::new(ErrorKind::Internal).with_cause("a returned string holds a NUL byte"))
        }
    }
}

/// A library string taking a secret: the copy is handed out and `secret` is wiped.
pub(crate) fn secret_string(mut secret: String) -> Result<*mut c_char, Error> {
    let out = library_string(&secret);
    secret.zeroize();
    out
}

/// Library strings made for a call's outputs, freed again if the call fails before handing
/// them over (so an error never leaks or half-writes outputs).
#[derive(Debug, Default)]
pub(crate) struct Pending(Vec<*mut c_char>);

impl Pending {
    /// Keep `ptr` until [`Pending::release`].
    pub(crate) fn keep(&mut self, ptr: Result<*mut c_char, Error>) -> Result<*mut c_char, Error> {
        let ptr = ptr?;
        self.0.push(ptr);
        Ok(ptr)
    }

    /// Hand every string over to the caller.
    pub(crate) fn release(mut self) {
        self.0.clear();
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        for ptr in self.0.drain(..) {
            // SAFETY: each pointer came from `library_string` and was never handed out.
            unsafe { free_library_string(ptr) };
        }
    }
}

/// # Safety
/// `ptr` is NULL or came from [`library_string`] and has not been freed.
unsafe fn free_library_string(ptr: *mut c_char) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: the caller's contract: `ptr` is a `CString::into_raw` result, freed once.
    let owned = unsafe { CString::from_raw(ptr) };
    owned.into_bytes_with_nul().zeroize();
}

/// Free a string returned by Rampart (a TOTP secret, a code, a key, a URI, an id, ...). Its
/// bytes are overwritten with zeros before the memory is released, so secrets do not linger
/// on the heap. NULL is a no-op.
///
/// Ownership: takes ownership of `string`; the pointer is invalid afterwards. Strings from
/// Rampart must be freed with this function and nothing else (never `free`), exactly once,
/// and must not have been modified. Static strings (`rampart_status_message`,
/// `rampart_status_name`) are never freed.
///
/// Threading: any thread may free a string, whichever thread received it.
///
/// # Safety
/// `string` is NULL or a string returned by Rampart that has not been freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_string_free(string: *mut c_char) {
    // SAFETY: forwarded contract.
    value_call((), || unsafe { free_library_string(string) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_null() {
        let p = library_string("JBSWY3DPEHPK3PXP").unwrap();
        // SAFETY: `p` came from `library_string` and is freed once.
        unsafe { rampart_string_free(p) };
        // SAFETY: NULL is allowed, any number of times.
        unsafe {
            rampart_string_free(std::ptr::null_mut());
            rampart_string_free(std::ptr::null_mut());
        }
        assert!(library_string("a\0b").is_err());
    }

    #[test]
    fn pending_strings_are_freed_on_failure() {
        let mut pending = Pending::default();
        pending.keep(library_string("one")).unwrap();
        pending.keep(library_string("two")).unwrap();
        drop(pending); // leak-checked under Miri or valgrind
    }
}
