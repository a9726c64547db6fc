/* A partner backend in plain C: the whole 2FA lifecycle of one contact through librampart.
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
    char message[256];
    rampart_last_error_message(message, sizeof message);
    fprintf(stderr, "%s: %u %s {\"message\":\"%s\",\"code\":%u}\n", what, (unsigned)status,
            rampart_status_name(status), message, (unsigned)rampart_status_code(status));
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

    /* POST /v1/auth/enable2fa with the code the user typed (spaces are fine). */
    char *code = app_code(manual, -1);
    CHECK("enable 2fa", rampart_service_enable_2fa(service, caller, contact, code));
    bool enabled = false;
    CHECK("status", rampart_service_status_2fa(service, caller, contact, &enabled));
    printf("enabled: 2FA is %s.\n", enabled ? "true" : "false");

    /* At login or purchase: a wrong code is an outcome, not an error. */
    bool accepted = true;
    CHECK("verify", rampart_service_verify_2fa(service, caller, contact, "000000", &accepted));
    printf("verify 000000: %s\n", accepted ? "accepted" : "rejected");
    rampart_string_free(code);
    code = app_code(manual, 0);
    CHECK("verify", rampart_service_verify_2fa(service, caller, contact, code, &accepted));
    printf("verify the app's code: %s\n", accepted ? "accepted" : "rejected");

    /* The same code again is a replay. */
    CHECK("verify", rampart_service_verify_2fa(service, caller, contact, code, &accepted));
    printf("verify it again: %s\n", accepted ? "accepted" : "rejected");

    /* Errors carry a status, an HTTP-style code and a fixed message. */
    rampart_status status = rampart_service_create_2fa(service, caller, contact, NULL, NULL, &qr_code, &manual, NULL);
    printf("create while enabled: %u {\"message\":\"%s\",\"code\":%u}\n", (unsigned)status,
           rampart_status_message(status), (unsigned)rampart_status_code(status));

    /* POST /v1/auth/disable2fa with a later code. */
    rampart_string_free(code);
    code = app_code(manual, 1);
    CHECK("disable 2fa", rampart_service_disable_2fa(service, caller, contact, code));
    CHECK("status", rampart_service_status_2fa(service, caller, contact, &enabled));
    printf("disabled: 2FA is %s.\n", enabled ? "true" : "false");

    /* Library strings are freed (and wiped) by rampart_string_free; the handle by _free. */
    char *strings[] = {partner, secret_key, publishable_key, caller, qr_code, manual, code};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(service);
    return 0;
}
