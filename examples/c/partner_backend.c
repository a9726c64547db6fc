/* A partner backend in plain C: the whole 2FA lifecycle of one contact through librampart,
 * then a purchase widget URL for the partner's page.
 *
 *   cc -std=c99 partner_backend.c $(pkg-config --cflags --libs rampart) -o partner_backend
 *   ./partner_backend [DB_PATH]
 *
 * In a real backend each step below is an HTTP handler: authenticate the partner's bearer key,
 * then create / enable / verify / disable for the contact named in the request, answering with
 * rampart_status_code() and the message. Here the user's authenticator app is played by
 * rampart_totp_code_at(). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rampart.h>

/* Print a failed call as the HTTP answer it stands for, and stop. */
static void fail(const char *what, rampart_status status) {
    char message[256], code[64];
    rampart_last_error_message(message, sizeof message);
    rampart_last_error_code(code, sizeof code);
    fprintf(stderr, "%s: %u %s {\"message\":\"%s\",\"code\":%u} (%s)\n", what, (unsigned)status,
            rampart_status_name(status), message, (unsigned)rampart_status_code(status), code);
    exit(1);
}

#define CHECK(what, call)                         \
    do {                                          \
        rampart_status status_ = (call);          \
        if (status_ != RAMPART_OK) fail(what, status_); \
    } while (0)

/* What the user's authenticator app shows `offset` steps from now. */
static char *app_code(const char *secret, int offset) {
    char *code = NULL;
    CHECK("code", rampart_totp_code_at(secret, (uint64_t)time(NULL) + (uint64_t)(offset * 30), &code));
    return code;
}

int main(int argc, char **argv) {
    const char *db_path = argc > 1 ? argv[1] : "partner_backend.db";
    const char *contact = "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11";

    /* Open the service once and share the handle between all request threads. Without a master
     * key, a sandbox service keeps one in DB_PATH.key (production needs an explicit key). */
    rampart_config config = rampart_config_default();
    config.service_name = "Acme";
    rampart_service *service = NULL;
    CHECK("open", rampart_service_open(db_path, &config, &service));

    /* Onboarding: a partner and its keys (the secret key is shown only now). */
    char *partner = NULL, *secret_key = NULL, *publishable_key = NULL;
    CHECK("create partner", rampart_service_create_partner(service, "Acme Shop", RAMPART_ENVIRONMENT_SANDBOX,
                                                           &partner, &secret_key, &publishable_key));
    printf("partner %s, publishable key %s\n", partner, publishable_key);

    /* Every request: "Authorization: Bearer <secret key>" names the partner. */
    char *caller = NULL;
    CHECK("authenticate", rampart_service_authenticate(service, secret_key, &caller, NULL));

    /* GET /v1/auth/create2fa: show the QR code (an <img src>) or the manual key once. */
    char *qr_code = NULL, *manual = NULL;
    CHECK("create 2fa", rampart_service_create_2fa(service, caller, contact, NULL, NULL, &qr_code, &manual, NULL));
    printf("created: QR code of %zu bytes, manual key of %zu characters\n", strlen(qr_code), strlen(manual));

    /* The demo uses codes one step apart; keep clear of a step's last seconds so they all
     * stay inside the one-step window. */
    if (time(NULL) % 30 > 26) sleep(4);

    /* POST /v1/auth/enable2fa with the code the user typed (spaces are fine). Enable hands out
     * 10 recovery codes: answer them once (details.recoveryCodes, Cache-Control: no-store),
     * never store or log them; rampart_recovery_codes_free wipes them. */
    char *code = app_code(manual, -1);
    rampart_recovery_codes *codes = NULL;
    CHECK("enable 2fa", rampart_service_enable_2fa(service, caller, contact, code, &codes));
    bool enabled = false;
    uint32_t remaining = 0;
    CHECK("status", rampart_service_status_2fa(service, caller, contact, &enabled));
    CHECK("remaining", rampart_service_recovery_codes_remaining(service, caller, contact, &remaining));
    printf("enabled: 2FA is %s, %zu recovery codes to show once (%u unused)\n", enabled ? "true" : "false",
           rampart_recovery_codes_count(codes), (unsigned)remaining);

    /* At login or purchase: a wrong code is an outcome, not an error. */
    bool accepted = true;
    CHECK("verify", rampart_service_verify_2fa(service, caller, contact, "000000", NULL, &accepted, NULL, NULL));
    printf("verify 000000: %s\n", accepted ? "accepted" : "rejected");
    rampart_string_free(code);
    code = app_code(manual, 0);
    CHECK("verify", rampart_service_verify_2fa(service, caller, contact, code, NULL, &accepted, NULL, NULL));
    printf("verify the app's code: %s\n", accepted ? "accepted" : "rejected");

    /* The same code again is a replay. */
    CHECK("verify", rampart_service_verify_2fa(service, caller, contact, code, NULL, &accepted, NULL, NULL));
    printf("verify it again: %s\n", accepted ? "accepted" : "rejected");

    /* A lost phone: a recovery code in place of the token (token NULL); it works once. */
    rampart_verify_method method = RAMPART_VERIFY_METHOD_NONE;
    const char *recovery = rampart_recovery_codes_at(codes, 0);
    CHECK("verify", rampart_service_verify_2fa(service, caller, contact, NULL, recovery, &accepted, &method, &remaining));
    printf("verify a recovery code: %s (%s), %u left\n", accepted ? "accepted" : "rejected",
           method == RAMPART_VERIFY_METHOD_RECOVERY_CODE ? "recoveryCode" : "token", (unsigned)remaining);
    CHECK("verify", rampart_service_verify_2fa(service, caller, contact, NULL, recovery, &accepted, NULL, NULL));
    printf("verify it again: %s\n", accepted ? "accepted" : "rejected");
    rampart_recovery_codes_free(codes);

    /* Errors carry a status, an HTTP-style code and a fixed message. */
    rampart_status status = rampart_service_create_2fa(service, caller, contact, NULL, NULL, &qr_code, &manual, NULL);
    printf("create while enabled: %u {\"message\":\"%s\",\"code\":%u}\n", (unsigned)status,
           rampart_status_message(status), (unsigned)rampart_status_code(status));

    /* POST /v1/auth/disable2fa with a later code. */
    rampart_string_free(code);
    code = app_code(manual, 1);
    CHECK("disable 2fa", rampart_service_disable_2fa(service, caller, contact, code, NULL));
    CHECK("status", rampart_service_status_2fa(service, caller, contact, &enabled));
    printf("disabled: 2FA is %s.\n", enabled ? "true" : "false");

    /* The purchase widget: options as JSON text, validated, then the canonical URL and a
     * signed one (the partner signs with its secret key; the widget server verifies). */
    char options[512];
    snprintf(options, sizeof options,
             "{\"publicKey\":\"%s\",\"tokens\":\"btc\","
             "\"receiveAddress\":{\"btc\":\"tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx\"},\"amount\":\"50\"}",
             publishable_key);
    rampart_widget_validation *widget = NULL;
    CHECK("validate widget options",
          rampart_widget_validate(NULL, options, RAMPART_WIDGET_TARGET_URL, RAMPART_ENVIRONMENT_SANDBOX, &widget));
    if (!rampart_widget_validation_is_valid(widget)) {
        for (size_t i = 0; i < rampart_widget_validation_error_count(widget); i++) {
            const char *issue = NULL, *path = NULL, *text = NULL;
            CHECK("issue", rampart_widget_validation_error_at(widget, i, &issue, &path, &text, NULL, NULL));
            fprintf(stderr, "widget option %s: %s (%s)\n", path, text, issue);
        }
        return 1;
    }
    char *widget_url = NULL, *signed_url = NULL;
    CHECK("widget url", rampart_widget_build_url(widget, &widget_url));
    CHECK("sign widget url", rampart_widget_sign_url(widget, secret_key, (uint64_t)time(NULL), &signed_url));
    printf("widget URL: %s\n", widget_url);
    printf("signed: %s\n", signed_url);
    rampart_widget_validation_free(widget);

    /* A problem with widget input is a status plus a stable code (here a mistyped address). */
    const char *network = NULL, *kind = NULL;
    rampart_status status2 = rampart_address_validate("bitcoin", "1BoatSLRHtKNngkdXEeobR76b53LETtpyU", false,
                                                      &network, &kind);
    char code2[64];
    rampart_last_error_code(code2, sizeof code2);
    printf("address check: %s (%s)\n", rampart_status_name(status2), status2 == RAMPART_OK ? kind : code2);

    /* Library strings are freed (and wiped) by rampart_string_free; the handle by _free. */
    char *strings[] = {partner, secret_key, publishable_key, caller, qr_code, manual, code, widget_url, signed_url};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(service);
    return 0;
}
