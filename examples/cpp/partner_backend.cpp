// The C example's flow in C++17 through the RAII wrapper in rampart.hpp: no manual frees, and
// failures arrive as rampart::Error.
//
//   c++ -std=c++17 partner_backend.cpp $(pkg-config --cflags --libs rampart) -o partner_backend
//   ./partner_backend [DB_PATH]
#include <chrono>
#include <cstdint>
#include <iostream>
#include <thread>

#include "rampart.hpp"

namespace {

std::uint64_t unix_now() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// What the user's authenticator app shows `offset` steps from now.
rampart::String app_code(const rampart::String &secret, int offset) {
    return rampart::totp_code_at(secret.str(), unix_now() + static_cast<std::uint64_t>(offset * 30));
}

}  // namespace

int main(int argc, char **argv) {
    const std::string db_path = argc > 1 ? argv[1] : "partner_backend.db";
    const std::string contact = "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11";
    try {
        rampart_config config = rampart_config_default();
        config.service_name = "Acme";
        const auto service = rampart::Service::open(db_path, config);

        const auto partner = service.create_partner("Acme Shop", RAMPART_ENVIRONMENT_SANDBOX);
        const auto caller = service.authenticate(partner.secret_key.str());
        std::cout << "partner " << caller.c_str() << "\n";

        const auto setup = service.create_2fa(caller.str(), contact);
        std::cout << "created: QR code of " << setup.qr_code.str().size() << " bytes\n";

        // Codes one step apart: keep clear of a step's last seconds (see the C example).
        if (unix_now() % 30 > 26) std::this_thread::sleep_for(std::chrono::seconds(4));

        // Enable hands out 10 recovery codes: show them once, never store or log them.
        const auto codes = service.enable_2fa(caller.str(), contact, app_code(setup.manual, -1).str());
        std::cout << "enabled: 2FA is " << (service.status_2fa(caller.str(), contact) ? "true" : "false") << ", "
                  << codes.size() << " recovery codes to show once\n";

        const auto code = app_code(setup.manual, 0);
        std::cout << "verify 000000: " << (service.verify_2fa(caller.str(), contact, "000000") ? "accepted" : "rejected")
                  << "\nverify the app's code: "
                  << (service.verify_2fa(caller.str(), contact, code.str()) ? "accepted" : "rejected")
                  << "\nverify it again: "
                  << (service.verify_2fa(caller.str(), contact, code.str()) ? "accepted" : "rejected") << "\n";

        // A lost phone: a recovery code verifies once (the factor says which kind of code it is).
        const auto recovered = service.verify_2fa(caller.str(), contact, rampart::Factor::recovery_code(codes[0]));
        std::cout << "verify a recovery code: " << (recovered ? "accepted" : "rejected") << ", "
                  << recovered.recovery_codes_remaining << " left\n";
        std::cout << "verify it again: "
                  << (service.verify_2fa(caller.str(), contact, rampart::Factor::recovery_code(codes[0])) ? "accepted"
                                                                                                       : "rejected")
                  << "\n";

        try {
            service.create_2fa(caller.str(), contact);
        } catch (const rampart::Error &e) {
            std::cout << "create while enabled: " << e.name() << " {\"message\":\"" << e.what()
                      << "\",\"code\":" << e.code() << "}\n";
        }

        service.disable_2fa(caller.str(), contact, app_code(setup.manual, 1).str());
        std::cout << "disabled: 2FA is " << (service.status_2fa(caller.str(), contact) ? "true" : "false") << ".\n";

        // The purchase widget: validate options (JSON text), then the canonical URL.
        const auto widget = rampart::WidgetValidation::validate(
            std::string("{\"publicKey\":\"") + partner.publishable_key.str() +
                "\",\"tokens\":\"btc\",\"receiveAddress\":{\"btc\":\"tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx\"},"
                "\"amount\":\"50\"}",
            RAMPART_WIDGET_TARGET_URL, RAMPART_ENVIRONMENT_SANDBOX);
        for (const auto &issue : widget.errors()) std::cerr << issue.path << ": " << issue.message << "\n";
        std::cout << "widget URL: " << widget.url().str() << "\n";

        // Invalid options: the issues say what to fix; building a URL from them throws.
        const auto bad = rampart::WidgetValidation::validate(R"({"environment":"sandbox","amount":"05"})");
        for (const auto &issue : bad.errors()) std::cout << "widget issue: " << issue.code << " at " << issue.path << "\n";
        try {
            bad.url();
        } catch (const rampart::Error &e) {
            std::cout << "url of invalid options: " << e.name() << " (" << e.detail() << ")\n";
        }
    } catch (const rampart::Error &e) {
        std::cerr << e.name() << " (" << e.code() << "): " << e.what() << "\n";
        return 1;
    }
    return 0;
}
