// A small C++17 RAII wrapper over rampart.h: owned strings and handles free themselves, and a
// status other than RAMPART_OK becomes a rampart::Error exception. Copy it into your project
// and extend it as you need; it adds no behaviour of its own.
#ifndef RAMPART_HPP
#define RAMPART_HPP

#include <rampart.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rampart {

// A failed call: the status, its stable name, HTTP-style code and refined message.
class Error : public std::runtime_error {
public:
    explicit Error(rampart_status status)
        : std::runtime_error(last_text(rampart_last_error_message)),
          status_(status),
          retry_after_(rampart_last_retry_after()),
          detail_(last_text(rampart_last_error_code)) {}

    rampart_status status() const noexcept { return status_; }
    std::uint16_t code() const noexcept { return rampart_status_code(status_); }
    const char *name() const noexcept { return rampart_status_name(status_); }
    // Seconds to wait after RAMPART_STATUS_THROTTLED (the Retry-After header), else 0.
    std::uint64_t retry_after() const noexcept { return retry_after_; }
    // The stable code: the status name, or the finer widget / URL / signature / address code
    // ("signature_mismatch", "address_base58_checksum").
    const std::string &detail() const noexcept { return detail_; }

private:
    static std::string last_text(std::size_t (*read)(char *, std::size_t)) {
        std::string text(read(nullptr, 0), '\0');
        read(text.data(), text.size() + 1);
        return text;
    }

    rampart_status status_;
    std::uint64_t retry_after_;
    std::string detail_;
};

inline void check(rampart_status status) {
    if (status != RAMPART_OK) throw Error(status);
}

// A library string; wiped and freed by rampart_string_free when it goes out of scope.
class String {
public:
    String() = default;
    explicit String(char *owned) noexcept : ptr_(owned) {}

    const char *c_str() const noexcept { return ptr_ ? ptr_.get() : ""; }
    bool is_null() const noexcept { return !ptr_; }
    std::string str() const { return c_str(); }

private:
    struct Free {
        void operator()(char *p) const noexcept { rampart_string_free(p); }
    };
    std::unique_ptr<char, Free> ptr_;
};

struct Partner {
    String id, secret_key, publishable_key;
};

struct Setup {
    String qr_code, manual, uri;
};

// A set of recovery codes, to show once: read by index; wiped and freed by
// rampart_recovery_codes_free when it goes out of scope.
class RecoveryCodes {
public:
    explicit RecoveryCodes(rampart_recovery_codes *owned) noexcept : ptr_(owned) {}

    std::size_t size() const noexcept { return rampart_recovery_codes_count(ptr_.get()); }
    // Borrowed from the set: valid while it lives (nullptr out of range).
    const char *operator[](std::size_t index) const noexcept { return rampart_recovery_codes_at(ptr_.get(), index); }

private:
    struct Free {
        void operator()(rampart_recovery_codes *p) const noexcept { rampart_recovery_codes_free(p); }
    };
    std::unique_ptr<rampart_recovery_codes, Free> ptr_;
};

// What proves 2FA in disable and verify: an authenticator code (a string converts to one) or
// Factor::recovery_code(code).
class Factor {
public:
    Factor(std::string token) : token_(std::move(token)) {}  // NOLINT: implicit, as a token is the usual factor
    Factor(const char *token) : token_(token ? token : "") {}  // NOLINT
    static Factor recovery_code(std::string code) {
        Factor f{std::string()};
        f.recovery_code_ = std::move(code);
        f.is_recovery_code_ = true;
        return f;
    }
    const char *token() const noexcept { return is_recovery_code_ ? nullptr : token_.c_str(); }
    const char *recovery_code() const noexcept { return is_recovery_code_ ? recovery_code_.c_str() : nullptr; }

private:
    std::string token_, recovery_code_;
    bool is_recovery_code_ = false;
};

// The outcome of a verify: true when accepted, with the factor and the codes left.
struct Verification {
    bool accepted = false;
    rampart_verify_method method = RAMPART_VERIFY_METHOD_NONE;
    std::uint32_t recovery_codes_remaining = 0;
    explicit operator bool() const noexcept { return accepted; }
};

// The service handle: thread-safe, so share one instance (by reference) across threads.
class Service {
public:
    // On a SQLite file; `config` is copied.
    static Service open(const std::string &db_path, const rampart_config &config = rampart_config_default()) {
        rampart_service *handle = nullptr;
        check(rampart_service_open(db_path.c_str(), &config, &handle));
        return Service(handle);
    }

    static Service open_memory(const rampart_config &config = rampart_config_default()) {
        rampart_service *handle = nullptr;
        check(rampart_service_open_memory(&config, &handle));
        return Service(handle);
    }

    Partner create_partner(const std::string &name, rampart_environment environment) const {
        // Out-pointers are written only on success, so a throw leaves nothing to free.
        char *id = nullptr, *secret_key = nullptr, *publishable_key = nullptr;
        check(rampart_service_create_partner(handle_.get(), name.c_str(), environment, &id, &secret_key,
                                             &publishable_key));
        return Partner{String(id), String(secret_key), String(publishable_key)};
    }

    // The partner id a bearer credential belongs to.
    String authenticate(const std::string &bearer) const {
        char *id = nullptr;
        check(rampart_service_authenticate(handle_.get(), bearer.c_str(), &id, nullptr));
        return String(id);
    }

    Setup create_2fa(const std::string &partner, const std::string &contact) const {
        char *qr_code = nullptr, *manual = nullptr, *uri = nullptr;
        check(rampart_service_create_2fa(handle_.get(), partner.c_str(), contact.c_str(), nullptr, nullptr, &qr_code,
                                         &manual, &uri));
        return Setup{String(qr_code), String(manual), String(uri)};
    }

    // Returns the 10 recovery codes, to show once.
    RecoveryCodes enable_2fa(const std::string &partner, const std::string &contact, const std::string &token) const {
        rampart_recovery_codes *codes = nullptr;
        check(rampart_service_enable_2fa(handle_.get(), partner.c_str(), contact.c_str(), token.c_str(), &codes));
        return RecoveryCodes(codes);
    }

    // A new set for an authenticator code; the old one stops working.
    RecoveryCodes regenerate_recovery_codes(const std::string &partner, const std::string &contact,
                                            const std::string &token) const {
        rampart_recovery_codes *codes = nullptr;
        check(rampart_service_regenerate_recovery_codes(handle_.get(), partner.c_str(), contact.c_str(), token.c_str(),
                                                        &codes));
        return RecoveryCodes(codes);
    }

    void disable_2fa(const std::string &partner, const std::string &contact, const Factor &factor) const {
        check(rampart_service_disable_2fa(handle_.get(), partner.c_str(), contact.c_str(), factor.token(),
                                          factor.recovery_code()));
    }

    bool status_2fa(const std::string &partner, const std::string &contact) const {
        bool enabled = false;
        check(rampart_service_status_2fa(handle_.get(), partner.c_str(), contact.c_str(), &enabled));
        return enabled;
    }

    std::uint32_t recovery_codes_remaining(const std::string &partner, const std::string &contact) const {
        std::uint32_t remaining = 0;
        check(rampart_service_recovery_codes_remaining(handle_.get(), partner.c_str(), contact.c_str(), &remaining));
        return remaining;
    }

    // A wrong code is a Verification that is false, not an exception.
    Verification verify_2fa(const std::string &partner, const std::string &contact, const Factor &factor) const {
        Verification v;
        check(rampart_service_verify_2fa(handle_.get(), partner.c_str(), contact.c_str(), factor.token(),
                                         factor.recovery_code(), &v.accepted, &v.method, &v.recovery_codes_remaining));
        return v;
    }

    const rampart_service *get() const noexcept { return handle_.get(); }

private:
    explicit Service(rampart_service *handle) noexcept : handle_(handle) {}

    struct Free {
        void operator()(rampart_service *p) const noexcept { rampart_service_free(p); }
    };
    std::unique_ptr<rampart_service, Free> handle_;
};

// One widget issue; the strings are copied out of the validation.
struct WidgetIssue {
    std::string code, path, message;
};

// Validated widget options (rampart_widget_validation): the issues, and for valid options
// the canonical URL, a signed URL and the snippets. Immutable, so share it freely.
class WidgetValidation {
public:
    // `options_json`: the options as JSON text. `environment`: RAMPART_ENVIRONMENT_* or
    // RAMPART_WIDGET_NO_ENVIRONMENT. `config`: nullptr for the default configuration.
    static WidgetValidation validate(const std::string &options_json,
                                     rampart_widget_target target = RAMPART_WIDGET_TARGET_URL,
                                     std::uint32_t environment = RAMPART_WIDGET_NO_ENVIRONMENT,
                                     const rampart_widget_config *config = nullptr) {
        rampart_widget_validation *handle = nullptr;
        check(rampart_widget_validate(config, options_json.c_str(), static_cast<std::uint32_t>(target), environment,
                                      &handle));
        return WidgetValidation(handle);
    }

    bool valid() const noexcept { return rampart_widget_validation_is_valid(handle_.get()); }

    std::vector<WidgetIssue> errors() const { return issues(rampart_widget_validation_error_count, rampart_widget_validation_error_at); }
    std::vector<WidgetIssue> warnings() const {
        return issues(rampart_widget_validation_warning_count, rampart_widget_validation_warning_at);
    }

    // Throws rampart::Error (detail() "options_invalid") when the options have errors.
    String url() const {
        char *out = nullptr;
        check(rampart_widget_build_url(handle_.get(), &out));
        return String(out);
    }

    String signed_url(const std::string &secret_key, std::uint64_t timestamp) const {
        char *out = nullptr;
        check(rampart_widget_sign_url(handle_.get(), secret_key.c_str(), timestamp, &out));
        return String(out);
    }

    String iframe_snippet(std::uint32_t width = 0, std::uint32_t height = 0) const {
        char *out = nullptr;
        check(rampart_widget_iframe_snippet(handle_.get(), width, height, nullptr, false, &out));
        return String(out);
    }

    const rampart_widget_validation *get() const noexcept { return handle_.get(); }

private:
    explicit WidgetValidation(rampart_widget_validation *handle) noexcept : handle_(handle) {}

    using Count = std::size_t (*)(const rampart_widget_validation *);
    using At = rampart_status (*)(const rampart_widget_validation *, std::size_t, const char **, const char **,
                                  const char **, const char **, const char **);

    std::vector<WidgetIssue> issues(Count count, At at) const {
        std::vector<WidgetIssue> out;
        for (std::size_t i = 0, n = count(handle_.get()); i < n; i++) {
            const char *code = nullptr, *path = nullptr, *message = nullptr;
            check(at(handle_.get(), i, &code, &path, &message, nullptr, nullptr));
            out.push_back({code, path, message});
        }
        return out;
    }

    struct Free {
        void operator()(rampart_widget_validation *p) const noexcept { rampart_widget_validation_free(p); }
    };
    std::unique_ptr<rampart_widget_validation, Free> handle_;
};

// The code an authenticator app shows for `secret` at `unix_time`.
inline String totp_code_at(const std::string &secret, std::uint64_t unix_time) {
    char *code = nullptr;
    check(rampart_totp_code_at(secret.c_str(), unix_time, &code));
    return String(code);
}

}  // namespace rampart

#endif
