//! Gives the shared library a versioned SONAME so installed copies can sit side by side.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".to_owned());
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,librampart.so.{major}");
    }
}
