/* The C ABI end to end: every row of the 2FA lifecycle table (SPEC section 2), every error kind
 * a call can produce, partners and keys, widget settings and embedding origins, the KYC rule,
 * the audit trail (each row's hash recomputed here) and metrics,
 * NULL and non-UTF-8 arguments (each the field's own status, as in every language), unknown
 * partners, out-pointers left alone on failure, `_free(NULL)`, and the SQLite store with its
 * master key file checks. */
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#define CONTACT_A "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11"
#define CONTACT_B "0d3a5a4f-6c1e-4a9e-9a77-5f2b8c1d0e21"
#define CONTACT_C "9b2f7c1e-1d4a-4f8e-b3c6-2a7d9e0f1b32"
#define CONTACT_D "4e8d2b6a-7f3c-4b1d-8e9a-0c5f1a2b3d43"
#define CONTACT_E "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c54"
#define OPERATOR "ops@example.com"
#define NO_PARTNER "00000000-0000-4000-8000-000000000000"
#define ISSUER_MESSAGE "twoFactorIssuer must be 1 to 64 characters without ':' or control characters"

static uint64_t now = 1700000000; /* the manual clock's time */

static rampart_service *open_manual(bool throttling) {
    rampart_config config = rampart_config_default();
    config.clock = manual_clock;
    config.clock_context = &now;
    config.throttling = throttling;
    rampart_service *service = NULL;
    OK(rampart_service_open_memory(&config, &service));
    assert(service != NULL);
    return service;
}

static char *new_partner(const rampart_service *service, char **out_secret_key) {
    char *id = NULL, *secret_key = NULL, *publishable = NULL;
    OK(rampart_service_create_partner(service, "Acme", RAMPART_ENVIRONMENT_SANDBOX, &id, &secret_key, &publishable));
    assert(strlen(id) == 36);
    assert(starts_with(secret_key, "sk_sandbox_"));
    assert(starts_with(publishable, "pk_sandbox_"));
    rampart_string_free(publishable);
    if (out_secret_key) {
        *out_secret_key = secret_key;
    } else {
        rampart_string_free(secret_key);
    }
    return id;
}

/* create_2fa returning the secret (manual); checks the other outputs' shapes. */
static char *create(const rampart_service *service, const char *partner, const char *contact) {
    char *qr = NULL, *manual = NULL, *uri = NULL;
    OK(rampart_service_create_2fa(service, partner, contact, NULL, NULL, &qr, &manual, &uri));
    assert(starts_with(qr, "data:image/png;base64,"));
    assert(strlen(manual) == 32);
    assert(starts_with(uri, "otpauth://totp/Rampart2FA:"));
    assert(strstr(uri, contact) != NULL);
    assert(strstr(uri, manual) != NULL);
    rampart_string_free(qr);
    rampart_string_free(uri);
    return manual;
}

static void enable_now(const rampart_service *service, const char *partner, const char *contact,
                       const char *secret) {
    char *code = code_at(secret, now);
    OK(rampart_service_enable_2fa(service, partner, contact, code, NULL));
    rampart_string_free(code);
}

static bool verify(const rampart_service *service, const char *partner, const char *contact, const char *token) {
    bool accepted = true;
    OK(rampart_service_verify_2fa(service, partner, contact, token, NULL, &accepted, NULL, NULL));
    return accepted;
}

static bool status(const rampart_service *service, const char *partner, const char *contact) {
    bool enabled = false;
    OK(rampart_service_status_2fa(service, partner, contact, &enabled));
    return enabled;
}

static void test_lifecycle_rows(void) {
    rampart_service *service = open_manual(true);
    char *partner = new_partner(service, NULL);

    /* disabled: status false; disable and verify answer "2FA is not enabled"; enable without a
     * created secret answers 409 before looking at the token. */
    assert(!status(service, partner, CONTACT_A));
    EXPECT(RAMPART_STATUS_NOT_ENABLED, rampart_service_disable_2fa(service, partner, CONTACT_A, "123456", NULL));
    EXPECT(RAMPART_STATUS_NOT_ENABLED, rampart_service_disable_2fa(service, partner, CONTACT_A, NULL, NULL));
    bool accepted = true;
    EXPECT(RAMPART_STATUS_NOT_ENABLED,
           rampart_service_verify_2fa(service, partner, CONTACT_A, "123456", NULL, &accepted, NULL, NULL));
    assert(accepted); /* untouched on failure */
    EXPECT(RAMPART_STATUS_NOT_CREATED, rampart_service_enable_2fa(service, partner, CONTACT_A, "123456", NULL));
    EXPECT(RAMPART_STATUS_NOT_CREATED, rampart_service_enable_2fa(service, partner, CONTACT_A, NULL, NULL));

    /* disabled + create: a pending secret; a second create replaces it. */
    char *first = create(service, partner, CONTACT_A);
    char *secret = create(service, partner, CONTACT_A);
    assert(strcmp(first, secret) != 0);
    assert(!status(service, partner, CONTACT_A));

    /* enable: missing token (not counted), wrong, malformed and non-UTF-8 tokens, and the code of
     * the replaced secret all fail. */
    EXPECT(RAMPART_STATUS_TOKEN_MISSING, rampart_service_enable_2fa(service, partner, CONTACT_A, NULL, NULL));
    EXPECT(RAMPART_STATUS_TOKEN_MISSING, rampart_service_enable_2fa(service, partner, CONTACT_A, "", NULL));
    EXPECT(RAMPART_STATUS_TOKEN_MISSING, rampart_service_enable_2fa(service, partner, CONTACT_A, " \t\n", NULL));
    assert(strcmp(last_message(), "Google 2FA requires the token to be passed in") == 0);
    char *old_code = code_at(first, now);
    char *good = code_at(secret, now);
    if (strcmp(old_code, good) != 0) { /* a one-in-a-million coincidence would make it valid */
        EXPECT(RAMPART_STATUS_TOKEN_FAILED, rampart_service_enable_2fa(service, partner, CONTACT_A, old_code, NULL));
    }
    EXPECT(RAMPART_STATUS_TOKEN_FAILED, rampart_service_enable_2fa(service, partner, CONTACT_A, "12345", NULL));
    EXPECT(RAMPART_STATUS_TOKEN_FAILED, rampart_service_enable_2fa(service, partner, CONTACT_A, "\xff\xfe\xfd", NULL));
    assert(strcmp(last_message(), "Google 2FA failed") == 0);
    assert(!status(service, partner, CONTACT_A));

    /* enable with the valid code, typed with a space: enabled. */
    char spaced[8];
    snprintf(spaced, sizeof spaced, "%.3s %.3s", good, good + 3);
    OK(rampart_service_enable_2fa(service, partner, CONTACT_A, spaced, NULL));
    assert(status(service, partner, CONTACT_A));

    /* enabled: create is 403, enable is 409 (token checked or not). */
    char *qr = (char *)1, *manual = (char *)1;
    EXPECT(RAMPART_STATUS_MUST_DISABLE_FIRST,
           rampart_service_create_2fa(service, partner, CONTACT_A, NULL, NULL, &qr, &manual, NULL));
    assert(qr == (char *)1 && manual == (char *)1);
    assert(rampart_status_code(RAMPART_STATUS_MUST_DISABLE_FIRST) == 403);
    EXPECT(RAMPART_STATUS_ALREADY_ENABLED, rampart_service_enable_2fa(service, partner, CONTACT_A, good, NULL));
    EXPECT(RAMPART_STATUS_ALREADY_ENABLED, rampart_service_enable_2fa(service, partner, CONTACT_A, NULL, NULL));

    /* verify: the enabling code is used up (replay), a wrong code is an outcome, the next
     * step's code is accepted once. */
    assert(!verify(service, partner, CONTACT_A, good));
    assert(!verify(service, partner, CONTACT_A, "000000") || strcmp(good, "000000") == 0);
    now += 30;
    char *next = code_at(secret, now);
    assert(verify(service, partner, CONTACT_A, next));
    assert(!verify(service, partner, CONTACT_A, next));
    EXPECT(RAMPART_STATUS_TOKEN_MISSING,
           rampart_service_verify_2fa(service, partner, CONTACT_A, NULL, NULL, &accepted, NULL, NULL));

    /* enabled + disable: missing and wrong tokens fail; a valid code disables. */
    EXPECT(RAMPART_STATUS_TOKEN_MISSING, rampart_service_disable_2fa(service, partner, CONTACT_A, NULL, NULL));
    EXPECT(RAMPART_STATUS_TOKEN_FAILED, rampart_service_disable_2fa(service, partner, CONTACT_A, "abcdef", NULL));
    EXPECT(RAMPART_STATUS_TOKEN_FAILED, rampart_service_disable_2fa(service, partner, CONTACT_A, next, NULL));
    now += 30;
    char *third = code_at(secret, now);
    char hyphened[8];
    snprintf(hyphened, sizeof hyphened, "%.3s-%.3s", third, third + 3);
    OK(rampart_service_disable_2fa(service, partner, CONTACT_A, hyphened, NULL));
    assert(!status(service, partner, CONTACT_A));
    EXPECT(RAMPART_STATUS_NOT_ENABLED, rampart_service_disable_2fa(service, partner, CONTACT_A, third, NULL));

    /* the secret is erased: enabling again needs a new create. */
    EXPECT(RAMPART_STATUS_NOT_CREATED, rampart_service_enable_2fa(service, partner, CONTACT_A, third, NULL));

    /* a pending secret expires after 600 s: usable at +599, gone at +600. */
    char *pending = create(service, partner, CONTACT_B);
    now += 600;
    char *late = code_at(pending, now);
    EXPECT(RAMPART_STATUS_NOT_CREATED, rampart_service_enable_2fa(service, partner, CONTACT_B, late, NULL));
    rampart_string_free(pending);
    pending = create(service, partner, CONTACT_B);
    now += 599;
    enable_now(service, partner, CONTACT_B, pending);
    assert(status(service, partner, CONTACT_B));

    /* contacts are scoped to their partner */
    char *other = new_partner(service, NULL);
    assert(!status(service, other, CONTACT_B));
    EXPECT(RAMPART_STATUS_NOT_ENABLED,
           rampart_service_verify_2fa(service, other, CONTACT_B, late, NULL, &accepted, NULL, NULL));

    char *strings[] = {first, secret, old_code, good, next, third, pending, late, partner, other};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(service);
}

static void test_throttle_and_lock(void) {
    rampart_service *service = open_manual(true);
    char *partner = new_partner(service, NULL);
    char *secret = create(service, partner, CONTACT_C);
    enable_now(service, partner, CONTACT_C, secret);

    /* five wrong codes are outcomes; the sixth attempt is refused for 30 s, right code or not */
    for (int i = 0; i < 5; i++) assert(!verify(service, partner, CONTACT_C, "1234567"));
    now += 30;
    char *right = code_at(secret, now);
    now -= 30; /* attempt the right code (of the next step) while throttled */
    bool accepted = true;
    EXPECT(RAMPART_STATUS_THROTTLED,
           rampart_service_verify_2fa(service, partner, CONTACT_C, right, NULL, &accepted, NULL, NULL));
    assert(accepted); /* untouched */
    assert(rampart_last_retry_after() == 30);
    assert(strcmp(last_message(), "Too many failed 2FA attempts, try again in 30 seconds") == 0);
    assert(rampart_status_code(RAMPART_STATUS_THROTTLED) == 429);
    /* the state answer comes before the throttle */
    EXPECT(RAMPART_STATUS_ALREADY_ENABLED, rampart_service_enable_2fa(service, partner, CONTACT_C, right, NULL));
    assert(rampart_last_retry_after() == 0); /* per call */
    now += 30;
    assert(verify(service, partner, CONTACT_C, right)); /* a success resets the count */
    rampart_string_free(right);

    /* 100 consecutive failures lock 2FA until an operator reset */
    for (int i = 0; i < 100; i++) {
        now += 3601;
        assert(!verify(service, partner, CONTACT_C, "000000x"));
    }
    now += 3601;
    right = code_at(secret, now);
    EXPECT(RAMPART_STATUS_LOCKED,
           rampart_service_verify_2fa(service, partner, CONTACT_C, right, NULL, &accepted, NULL, NULL));
    EXPECT(RAMPART_STATUS_LOCKED, rampart_service_disable_2fa(service, partner, CONTACT_C, right, NULL));
    assert(rampart_status_code(RAMPART_STATUS_LOCKED) == 423);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_reset_lock(service, "", partner, CONTACT_C));
    OK(rampart_service_reset_lock(service, OPERATOR, partner, CONTACT_C));
    assert(verify(service, partner, CONTACT_C, right));
    rampart_string_free(right);

    /* with throttling off, failures never refuse */
    rampart_service *relaxed = open_manual(false);
    char *partner2 = new_partner(relaxed, NULL);
    char *secret2 = create(relaxed, partner2, CONTACT_C);
    enable_now(relaxed, partner2, CONTACT_C, secret2);
    for (int i = 0; i < 8; i++) assert(!verify(relaxed, partner2, CONTACT_C, "bad"));
    now += 30;
    right = code_at(secret2, now);
    assert(verify(relaxed, partner2, CONTACT_C, right));
    rampart_string_free(right);

    rampart_string_free(secret);
    rampart_string_free(partner);
    rampart_string_free(secret2);
    rampart_string_free(partner2);
    rampart_service_free(relaxed);
    rampart_service_free(service);
}

static void test_inputs(void) {
    rampart_service *service = open_manual(true);
    char *partner = new_partner(service, NULL);
    char *qr = (char *)1, *manual = (char *)1;
    bool flag = true;

    /* contact ids: NULL and "" are "required", anything else not a UUID "invalid" */
    EXPECT(RAMPART_STATUS_CONTACT_ID_REQUIRED,
           rampart_service_create_2fa(service, partner, NULL, NULL, NULL, &qr, &manual, NULL));
    EXPECT(RAMPART_STATUS_CONTACT_ID_REQUIRED, rampart_service_status_2fa(service, partner, "", &flag));
    assert(strcmp(last_message(), "contactId is required") == 0);
    EXPECT(RAMPART_STATUS_CONTACT_ID_INVALID, rampart_service_status_2fa(service, partner, "not-a-uuid", &flag));
    EXPECT(RAMPART_STATUS_CONTACT_ID_INVALID,
           rampart_service_status_2fa(service, partner, "6f1c2a4e93b14c558f1e0b9b6a0d2c11", &flag));
    EXPECT(RAMPART_STATUS_CONTACT_ID_INVALID, rampart_service_enable_2fa(service, partner, "\xc3\x28", "123456", NULL));
    assert(strcmp(last_message(), "contactId must be a UUID") == 0);
    /* upper case is the same contact */
    char *secret = create(service, partner, CONTACT_D);
    char upper[40];
    for (size_t i = 0; i <= strlen(CONTACT_D); i++) {
        char c = CONTACT_D[i];
        upper[i] = (char)((c >= 'a' && c <= 'f') ? c - 32 : c);
    }
    enable_now(service, partner, upper, secret);
    assert(status(service, partner, CONTACT_D));

    /* issuers */
    EXPECT(RAMPART_STATUS_ISSUER_INVALID,
           rampart_service_create_2fa(service, partner, CONTACT_E, "Acme:Shop", NULL, &qr, &manual, NULL));
    char long_issuer[70];
    memset(long_issuer, 'x', 65);
    long_issuer[65] = '\0';
    EXPECT(RAMPART_STATUS_ISSUER_INVALID,
           rampart_service_create_2fa(service, partner, CONTACT_E, long_issuer, NULL, &qr, &manual, NULL));
    /* bytes that are not UTF-8: the issuer's own 400, as a lone surrogate is in Python and Node */
    EXPECT(RAMPART_STATUS_ISSUER_INVALID,
           rampart_service_create_2fa(service, partner, CONTACT_E, "\xff", NULL, &qr, &manual, NULL));
    assert(strcmp(last_message(), ISSUER_MESSAGE) == 0);
    EXPECT(RAMPART_STATUS_ISSUER_INVALID,
           rampart_service_create_2fa(service, partner, CONTACT_E, "Acme \xed\xa0\x80", NULL, &qr, &manual, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_service_create_2fa(service, partner, CONTACT_E, "Acme", "jane\xc3", &qr, &manual, NULL));
    assert(strcmp(last_message(), "label must be valid Unicode text") == 0);
    EXPECT(RAMPART_STATUS_CONTACT_ID_INVALID,
           rampart_service_create_2fa(service, partner, "\xff" CONTACT_E, NULL, NULL, &qr, &manual, NULL));
    assert(strcmp(last_message(), "contactId must be a UUID") == 0);
    assert(qr == (char *)1 && manual == (char *)1);
    /* ... and a token that is not UTF-8 is a code that does not verify, never a 400 */
    bool ok = true;
    EXPECT(RAMPART_STATUS_NOT_ENABLED,
           rampart_service_verify_2fa(service, partner, CONTACT_E, "\xff", NULL, &ok, NULL, NULL));
    assert(ok);
    assert(verify(service, partner, CONTACT_D, "\xed\xa0\x80" "123456") == false);
    char *uri = NULL;
    OK(rampart_service_create_2fa(service, partner, CONTACT_E, "Acme Shop", "jane@example.com", &qr, &manual, &uri));
    assert(starts_with(uri, "otpauth://totp/Acme%20Shop:jane%40example.com?secret="));
    rampart_string_free(qr);
    rampart_string_free(manual);
    rampart_string_free(uri);
    qr = (char *)1;
    manual = (char *)1;

    /* partner ids */
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_status_2fa(service, NULL, CONTACT_A, &flag));
    assert(strcmp(last_message(), "partner_id must not be NULL") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_status_2fa(service, "acme", CONTACT_A, &flag));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_status_2fa(service, "\x80", CONTACT_A, &flag));
    assert(strcmp(last_message(), "partner_id must be valid Unicode text") == 0);
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND, rampart_service_widget_text(service, NO_PARTNER, &qr));
    assert(rampart_status_code(RAMPART_STATUS_PARTNER_NOT_FOUND) == 404);

    /* a partner that does not exist: 404 "Partner not found", never an orphan contact */
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND,
           rampart_service_create_2fa(service, NO_PARTNER, CONTACT_E, NULL, NULL, &qr, &manual, NULL));
    assert(strcmp(last_message(), "Partner not found") == 0);
    assert(rampart_status_code(RAMPART_STATUS_PARTNER_NOT_FOUND) == 404);
    char name[64];
    assert(rampart_last_error_code(name, sizeof name) == strlen("partner_not_found"));
    assert(strcmp(name, "partner_not_found") == 0);
    assert(qr == (char *)1 && manual == (char *)1);
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND,
           rampart_service_enable_2fa(service, NO_PARTNER, CONTACT_E, "123456", NULL));
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND,
           rampart_service_disable_2fa(service, NO_PARTNER, CONTACT_E, "123456", NULL));
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND, rampart_service_status_2fa(service, NO_PARTNER, CONTACT_E, &flag));
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND,
           rampart_service_verify_2fa(service, NO_PARTNER, CONTACT_E, "123456", NULL, &flag, NULL, NULL));
    assert(strcmp(last_message(), "Partner not found") == 0);

    /* NULL handle and NULL out-pointers: a status, no crash, nothing written */
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_status_2fa(NULL, partner, CONTACT_A, &flag));
    assert(strcmp(last_message(), "service must not be NULL") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_status_2fa(service, partner, CONTACT_A, NULL));
    assert(strcmp(last_message(), "out_enabled must not be NULL") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_service_verify_2fa(service, partner, CONTACT_D, "1", NULL, NULL, NULL, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_service_create_2fa(service, partner, CONTACT_B, NULL, NULL, NULL, &manual, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_service_create_2fa(service, partner, CONTACT_B, NULL, NULL, &qr, NULL, NULL));
    assert(qr == (char *)1 && manual == (char *)1);
    /* ... and the failed call did nothing: CONTACT_B has no pending secret */
    EXPECT(RAMPART_STATUS_NOT_CREATED, rampart_service_enable_2fa(service, partner, CONTACT_B, "123456", NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_enable_2fa(NULL, partner, CONTACT_A, "123456", NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_disable_2fa(NULL, partner, CONTACT_A, "123456", NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_ping(NULL));
    OK(rampart_service_ping(service));
    char *id = (char *)1, *key = (char *)1, *pk = (char *)1;
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_service_create_partner(service, NULL, RAMPART_ENVIRONMENT_SANDBOX, &id, &key, &pk));
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_service_create_partner(service, "", RAMPART_ENVIRONMENT_SANDBOX, &id, &key, &pk));
    assert(strcmp(last_message(), "name must be 1 to 200 characters without control characters") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_service_create_partner(service, "\xe2\x82", RAMPART_ENVIRONMENT_SANDBOX, &id, &key, &pk));
    assert(strcmp(last_message(), "name must be valid Unicode text") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_create_partner(service, "Acme", 7, &id, &key, &pk));
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_service_create_partner(service, "Acme", RAMPART_ENVIRONMENT_SANDBOX, &id, NULL, &pk));
    assert(id == (char *)1 && key == (char *)1 && pk == (char *)1);

    /* the last error buffer behaves like snprintf */
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_ping(NULL));
    char small[8];
    size_t full = rampart_last_error_message(small, sizeof small);
    assert(full == strlen("service must not be NULL"));
    assert(strcmp(small, "service") == 0);
    assert(rampart_last_error_message(NULL, 0) == full);
    char untouched[4] = "abc";
    assert(rampart_last_error_message(untouched, 0) == full && strcmp(untouched, "abc") == 0);
    OK(rampart_service_ping(service));
    assert(rampart_last_error_message(small, sizeof small) == 0 && small[0] == '\0');

    /* freeing NULL is a no-op, any number of times */
    rampart_service_free(NULL);
    rampart_service_free(NULL);
    rampart_string_free(NULL);
    rampart_string_free(NULL);

    rampart_string_free(secret);
    rampart_string_free(partner);
    rampart_service_free(service);
}

static void test_partners_and_settings(void) {
    rampart_service *service = open_manual(true);
    char *key = NULL;
    char *partner = new_partner(service, &key);

    /* bearer authentication */
    char *who = NULL;
    bool legacy = true;
    OK(rampart_service_authenticate(service, key, &who, &legacy));
    assert(strcmp(who, partner) == 0 && !legacy);
    rampart_string_free(who);
    who = (char *)1;
    EXPECT(RAMPART_STATUS_UNAUTHORIZED, rampart_service_authenticate(service, "sk_sandbox_nope", &who, NULL));
    EXPECT(RAMPART_STATUS_UNAUTHORIZED, rampart_service_authenticate(service, "", &who, NULL));
    EXPECT(RAMPART_STATUS_UNAUTHORIZED, rampart_service_authenticate(service, "\xff\xff", &who, NULL));
    EXPECT(RAMPART_STATUS_UNAUTHORIZED, rampart_service_authenticate(service, "eyJhbGciOiJub25lIn0.e30.", &who, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_authenticate(service, NULL, &who, NULL));
    assert(who == (char *)1);
    assert(rampart_status_code(RAMPART_STATUS_UNAUTHORIZED) == 401);

    /* keys of the other environment and publishable keys are refused */
    char *prod_id = NULL, *prod_key = NULL, *prod_pk = NULL;
    OK(rampart_service_create_partner(service, "Acme Live", RAMPART_ENVIRONMENT_PRODUCTION, &prod_id, &prod_key,
                                      &prod_pk));
    assert(starts_with(prod_key, "sk_production_") && starts_with(prod_pk, "pk_production_"));
    EXPECT(RAMPART_STATUS_UNAUTHORIZED, rampart_service_authenticate(service, prod_key, &who, NULL));
    EXPECT(RAMPART_STATUS_UNAUTHORIZED, rampart_service_authenticate(service, prod_pk, &who, NULL));

    /* rotation: the old key stops working at once */
    char *new_key = NULL, *new_pk = NULL;
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_rotate_keys(service, NULL, partner, &new_key, &new_pk));
    OK(rampart_service_rotate_keys(service, OPERATOR, partner, &new_key, &new_pk));
    EXPECT(RAMPART_STATUS_UNAUTHORIZED, rampart_service_authenticate(service, key, &who, NULL));
    OK(rampart_service_authenticate(service, new_key, &who, NULL));
    assert(strcmp(who, partner) == 0);
    rampart_string_free(who);
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND, rampart_service_rotate_keys(service, OPERATOR,
                                                                         "00000000-0000-4000-8000-000000000000",
                                                                         &new_key, &new_pk));

    /* widget text */
    char *text = (char *)1;
    OK(rampart_service_widget_text(service, partner, &text));
    assert(text == NULL);
    EXPECT(RAMPART_STATUS_WIDGET_TEXT_INVALID, rampart_service_set_widget_text(service, partner, ""));
    EXPECT(RAMPART_STATUS_WIDGET_TEXT_INVALID, rampart_service_set_widget_text(service, partner, "tab\there"));
    EXPECT(RAMPART_STATUS_WIDGET_TEXT_INVALID, rampart_service_set_widget_text(service, partner, "\xff"));
    assert(strcmp(last_message(), "widgetText must be 1 to 64 characters without control characters") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_set_widget_text(service, partner, NULL));
    OK(rampart_service_set_widget_text(service, partner, "Back to the shop \xe2\x86\x92"));
    OK(rampart_service_widget_text(service, partner, &text));
    assert(strcmp(text, "Back to the shop \xe2\x86\x92") == 0);
    rampart_string_free(text);

    /* widget button URL */
    char *url = (char *)1;
    OK(rampart_service_widget_button_url(service, partner, &url));
    assert(url == NULL);
    const char *bad_urls[] = {"", "/relative", "ftp://example.com/", "https://user:pw@example.com/",
                              "javascript:alert(1)", " https://example.com/"};
    for (size_t i = 0; i < sizeof bad_urls / sizeof bad_urls[0]; i++) {
        EXPECT(RAMPART_STATUS_WIDGET_BUTTON_URL_INVALID,
               rampart_service_set_widget_button_url(service, partner, bad_urls[i]));
    }
    EXPECT(RAMPART_STATUS_WIDGET_BUTTON_URL_INVALID,
           rampart_service_set_widget_button_url(service, partner, "https://shop.example.com/\xff"));
    assert(strcmp(last_message(), "widgetButtonURL must be an absolute http(s) URL without credentials, at most "
                                  "2048 characters") == 0);
    OK(rampart_service_set_widget_button_url(service, partner, "https://shop.example.com/done?x=1"));
    OK(rampart_service_widget_button_url(service, partner, &url));
    assert(strcmp(url, "https://shop.example.com/done?x=1") == 0);
    rampart_string_free(url);

    /* KYC rule and waiver */
    bool required = true, allowed = false;
    OK(rampart_service_is_2fa_required(service, partner, CONTACT_A, &required));
    assert(!required);
    OK(rampart_service_set_kyc_passed(service, OPERATOR, partner, CONTACT_A, true));
    OK(rampart_service_is_2fa_required(service, partner, CONTACT_A, &required));
    OK(rampart_service_may_purchase(service, partner, CONTACT_A, &allowed));
    assert(required && !allowed);
    char *secret = create(service, partner, CONTACT_A);
    enable_now(service, partner, CONTACT_A, secret);
    OK(rampart_service_may_purchase(service, partner, CONTACT_A, &allowed));
    assert(allowed);
    OK(rampart_service_set_kyc_passed(service, OPERATOR, partner, CONTACT_B, true));
    OK(rampart_service_set_2fa_waiver(service, OPERATOR, partner, true));
    OK(rampart_service_is_2fa_required(service, partner, CONTACT_B, &required));
    OK(rampart_service_may_purchase(service, partner, CONTACT_B, &allowed));
    assert(!required && allowed);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_set_2fa_waiver(service, "\x01", partner, false));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_set_2fa_waiver(service, "ops\xc0\xaf", partner, false));
    assert(strcmp(last_message(), "operator_name must be valid Unicode text") == 0);
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND,
           rampart_service_set_kyc_passed(service, OPERATOR, "00000000-0000-4000-8000-000000000000", CONTACT_A, true));

    char *strings[] = {key, partner, prod_id, prod_key, prod_pk, new_key, new_pk, secret};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(service);
}

/* Who may embed the widget (SPEC section 6.2): origins in and out as JSON arrays, canonical,
 * at most 20, https only in production, errors naming the index, text that is not valid Unicode
 * (bytes that are not UTF-8, a lone \uD800 escape) that item's 400; the operator's approval
 * (its audit rows are read back in test_audit_trail). */
static void expect_invalid(rampart_status got, const char *message) {
    EXPECT(RAMPART_STATUS_INVALID_INPUT, got);
    if (strcmp(last_message(), message) != 0) fprintf(stderr, "  want \"%s\", got \"%s\"\n", message, last_message());
    assert(strcmp(last_message(), message) == 0);
    char code[64];
    rampart_last_error_code(code, sizeof code);
    assert(strcmp(code, "invalid_input") == 0);
}

static void expect_origins(const rampart_service *service, const char *partner, const char *want) {
    char *json = NULL;
    OK(rampart_service_widget_origins(service, partner, &json));
    if (strcmp(json, want) != 0) fprintf(stderr, "  want %s, got %s\n", want, json);
    assert(strcmp(json, want) == 0);
    rampart_string_free(json);
}

static void test_widget_embedding(void) {
    rampart_service *service = open_manual(true);
    char *partner = new_partner(service, NULL);
    char *live = NULL, *live_key = NULL, *live_pk = NULL;
    OK(rampart_service_create_partner(service, "Live", RAMPART_ENVIRONMENT_PRODUCTION, &live, &live_key, &live_pk));

    /* round trip, canonical */
    expect_origins(service, partner, "[]");
    char *stored = NULL;
    OK(rampart_service_set_widget_origins(service, partner, "[\"HTTPS://Shop.Example:443\",\"http://localhost:3000/\"]",
                                          &stored));
    assert(strcmp(stored, "[\"https://shop.example\",\"http://localhost:3000\"]") == 0);
    rampart_string_free(stored);
    expect_origins(service, partner, "[\"https://shop.example\",\"http://localhost:3000\"]");
    OK(rampart_service_set_widget_origins(service, partner, "[\"https://b\xc3\xbc" "cher.example\"]", NULL));
    expect_origins(service, partner, "[\"https://xn--bcher-kva.example\"]");

    /* production takes only https; the error names the index and nothing is stored */
    OK(rampart_service_set_widget_origins(service, live, "[\"https://shop.example\"]", NULL));
    stored = (char *)1;
    expect_invalid(rampart_service_set_widget_origins(service, live, "[\"https://a.example\",\"http://b.example\"]",
                                                      &stored),
                   "widgetOrigins[1] must be https in production");
    assert(stored == (char *)1);
    expect_origins(service, live, "[\"https://shop.example\"]");

    /* at most 20; none twice; nothing but origins */
    char list[1024];
    size_t at = 0;
    at += (size_t)snprintf(list + at, sizeof list - at, "[");
    for (int i = 0; i < 20; i++) {
        at += (size_t)snprintf(list + at, sizeof list - at, "%s\"https://s%d.example\"", i ? "," : "", i);
    }
    snprintf(list + at, sizeof list - at, "]");
    OK(rampart_service_set_widget_origins(service, partner, list, &stored));
    assert(strcmp(stored, list) == 0);
    rampart_string_free(stored);
    stored = (char *)1;
    snprintf(list + at, sizeof list - at, ",\"https://s20.example\"]");
    expect_invalid(rampart_service_set_widget_origins(service, partner, list, NULL),
                   "widgetOrigins may list at most 20 origins");
    /* the length is the answer before any item's, as in Python and Node */
    snprintf(list + at, sizeof list - at, ",\"\xff\"]");
    expect_invalid(rampart_service_set_widget_origins(service, partner, list, NULL),
                   "widgetOrigins may list at most 20 origins");
    expect_invalid(rampart_service_set_widget_origins(service, partner,
                                                      "[\"https://a.example\",\"HTTPS://A.example:443\"]", NULL),
                   "widgetOrigins[1] is the same origin as widgetOrigins[0]");
    expect_invalid(rampart_service_set_widget_origins(service, partner, "[\"https://*.example\"]", NULL),
                   "widgetOrigins[0] must not hold a wildcard: register each origin");

    /* text that is not valid Unicode: that item's own 400, as a lone surrogate in Python and Node */
    expect_invalid(rampart_service_set_widget_origins(service, partner, "[\"https://a.example\",\"https://b\xff.example\"]",
                                                      NULL),
                   "widgetOrigins[1] must be valid Unicode text");
    expect_invalid(rampart_service_set_widget_origins(service, partner, "[\"https://a.example\",\"\\ud800\"]", NULL),
                   "widgetOrigins[1] must be valid Unicode text");
    expect_invalid(rampart_service_set_widget_origins(service, partner, "[\"\xed\xa0\x80\"]", NULL),
                   "widgetOrigins[0] must be valid Unicode text");

    /* the argument itself: NULL, not JSON, not an array, an item that is not a string */
    expect_invalid(rampart_service_set_widget_origins(service, partner, NULL, NULL), "origins_json must not be NULL");
    expect_invalid(rampart_service_set_widget_origins(service, partner, "[", NULL), "origins_json must be JSON text");
    expect_invalid(rampart_service_set_widget_origins(service, partner, "[1,\xff]", NULL),
                   "origins_json must be valid Unicode text");
    expect_invalid(rampart_service_set_widget_origins(service, partner, "\"https://a.example\"", NULL),
                   "origins_json must be a JSON array of strings");
    expect_invalid(rampart_service_set_widget_origins(service, partner, "[\"https://a.example\",7]", NULL),
                   "widgetOrigins[1] must be a string");
    expect_invalid(rampart_service_set_widget_origins(service, partner, "[null]", NULL),
                   "widgetOrigins[0] must be a string");
    expect_invalid(rampart_service_set_widget_origins(NULL, partner, "[]", NULL), "service must not be NULL");
    expect_invalid(rampart_service_set_widget_origins(service, NULL, "[]", NULL), "partner_id must not be NULL");
    expect_invalid(rampart_service_widget_origins(service, partner, NULL), "out_origins_json must not be NULL");
    expect_invalid(rampart_service_widget_origins(service, "\x80", &stored), "partner_id must be valid Unicode text");
    assert(stored == (char *)1);
    /* none of those changed the stored list */
    char *twenty = NULL;
    OK(rampart_service_widget_origins(service, partner, &twenty));
    assert(strncmp(twenty, "[\"https://s0.example\",", 22) == 0 && strstr(twenty, "\"https://s19.example\"]") != NULL);
    rampart_string_free(twenty);
    OK(rampart_service_set_widget_origins(service, partner, "[]", NULL));
    expect_origins(service, partner, "[]");

    /* the operator's approval */
    bool approved = true;
    OK(rampart_service_widget_approved(service, live, &approved));
    assert(!approved);
    OK(rampart_service_set_widget_approval(service, OPERATOR, live, true));
    OK(rampart_service_widget_approved(service, live, &approved));
    assert(approved);
    OK(rampart_service_set_widget_approval(service, OPERATOR, live, false));
    OK(rampart_service_widget_approved(service, live, &approved));
    assert(!approved);
    expect_invalid(rampart_service_set_widget_approval(service, NULL, live, true), "operator_name must not be NULL");
    expect_invalid(rampart_service_set_widget_approval(service, "ops\xc0\xaf", live, true),
                   "operator_name must be valid Unicode text");
    expect_invalid(rampart_service_set_widget_approval(service, OPERATOR, NULL, true), "partner_id must not be NULL");
    expect_invalid(rampart_service_widget_approved(service, live, NULL), "out_approved must not be NULL");
    OK(rampart_service_widget_approved(service, live, &approved));
    assert(!approved);

    /* a partner that does not exist: 404, outputs untouched */
    approved = true;
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND,
           rampart_service_set_widget_origins(service, NO_PARTNER, "[\"https://a.example\"]", &stored));
    assert(strcmp(last_message(), "Partner not found") == 0);
    char code[64];
    assert(rampart_last_error_code(code, sizeof code) == strlen("partner_not_found"));
    assert(strcmp(code, "partner_not_found") == 0);
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND, rampart_service_widget_origins(service, NO_PARTNER, &stored));
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND, rampart_service_widget_approved(service, NO_PARTNER, &approved));
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND, rampart_service_set_widget_approval(service, OPERATOR, NO_PARTNER, true));
    assert(stored == (char *)1 && approved);

    char *strings[] = {partner, live, live_key, live_pk};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(service);
}

static void test_config(void) {
    rampart_service *service = (rampart_service *)1;
    rampart_config config = rampart_config_default();
    assert(config.window == 1 && config.throttling && config.pending_ttl_secs == 600);
    assert(config.environment == RAMPART_ENVIRONMENT_SANDBOX && config.master_key == NULL);

    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_open_memory(NULL, &service));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_open_memory(&config, NULL));
    config.window = 3;
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_open_memory(&config, &service));
    assert(strcmp(last_message(), "window must be 0, 1 or 2") == 0);
    assert(rampart_status_code(RAMPART_STATUS_CONFIG) == 500);
    config = rampart_config_default();
    config.service_name = "Bad:Name";
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open_memory(&config, &service));
    config = rampart_config_default();
    config.environment = 9;
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open_memory(&config, &service));
    config = rampart_config_default();
    config.environment = RAMPART_ENVIRONMENT_PRODUCTION;
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open_memory(&config, &service));
    assert(strcmp(last_message(), "production refuses to start without a master key") == 0);
    uint8_t key[33] = {0};
    config.master_key = key;
    config.master_key_len = 31;
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open_memory(&config, &service));
    config.master_key_len = 33;
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open_memory(&config, &service));
    config.master_key = NULL;
    config.master_key_len = 32;
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open_memory(&config, &service));
    config = rampart_config_default();
    config.service_name = "Acme\xff";
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_open_memory(&config, &service));
    assert(strcmp(last_message(), "config.service_name must be valid Unicode text") == 0);
    config = rampart_config_default();
    config.pending_ttl_secs = 0; /* out-of-range numbers are the argument's own 400 */
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_open_memory(&config, &service));
    assert(strcmp(last_message(), "pending_ttl_secs must be at least 1") == 0);
    config = rampart_config_default();
    config.jwt_secret = (const uint8_t *)"too short";
    config.jwt_secret_len = 9;
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open_memory(&config, &service));
    assert(service == (rampart_service *)1);

    /* a production service with a key, a custom name (the default issuer) and a JWT secret */
    config = rampart_config_default();
    config.environment = RAMPART_ENVIRONMENT_PRODUCTION;
    config.master_key = key;
    config.master_key_len = 32;
    config.master_key_id = 7;
    config.service_name = "Acme";
    config.jwt_secret = (const uint8_t *)"0123456789abcdef0123456789abcdef";
    config.jwt_secret_len = 32;
    OK(rampart_service_open_memory(&config, &service));
    char *partner = NULL, *sk = NULL, *pk = NULL, *who = (char *)1;
    OK(rampart_service_create_partner(service, "Acme", RAMPART_ENVIRONMENT_PRODUCTION, &partner, &sk, &pk));
    OK(rampart_service_authenticate(service, sk, &who, NULL));
    rampart_string_free(who);
    EXPECT(RAMPART_STATUS_UNAUTHORIZED, rampart_service_authenticate(service, "a.b.c", &who, NULL));
    char *qr = NULL, *manual = NULL, *uri = NULL;
    OK(rampart_service_create_2fa(service, partner, CONTACT_A, "", NULL, &qr, &manual, &uri));
    assert(starts_with(uri, "otpauth://totp/Acme2FA:" CONTACT_A "?"));
    char *strings[] = {partner, sk, pk, qr, manual, uri};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(service);
}

static void test_storage_failures(void) {
    rampart_config config = rampart_config_default();
    config.clock = manual_clock;
    config.clock_context = &now;
    rampart_service *service = NULL;
    OK(rampart_service_open_faulty(&config, &service));
    char *partner = new_partner(service, NULL);
    char *secret = create(service, partner, CONTACT_A);
    enable_now(service, partner, CONTACT_A, secret);
    char *pending = create(service, partner, CONTACT_B);
    now += 30;
    char *code = code_at(secret, now);
    char *pending_code = code_at(pending, now);
    char *qr = NULL, *manual = NULL, *id = NULL, *sk = NULL, *pk = NULL;
    bool flag = false;

    OK(rampart_service_set_faults(service, false, true, false));
    EXPECT(RAMPART_STATUS_CREATE_FAILED,
           rampart_service_create_2fa(service, partner, CONTACT_C, NULL, NULL, &qr, &manual, NULL));
    assert(strcmp(last_message(), "Error enabling 2FA") == 0);
    EXPECT(RAMPART_STATUS_INTERNAL,
           rampart_service_create_partner(service, "Acme", RAMPART_ENVIRONMENT_SANDBOX, &id, &sk, &pk));
    char cause[256];
    assert(rampart_last_error_cause(cause, sizeof cause) > 0 && strstr(cause, "injected") != NULL);
    EXPECT(RAMPART_STATUS_INTERNAL, rampart_service_set_widget_text(service, partner, "Done"));

    OK(rampart_service_set_faults(service, true, false, true));
    EXPECT(RAMPART_STATUS_STATUS_FAILED, rampart_service_status_2fa(service, partner, CONTACT_A, &flag));
    EXPECT(RAMPART_STATUS_VERIFY_FAILED,
           rampart_service_verify_2fa(service, partner, CONTACT_A, code, NULL, &flag, NULL, NULL));
    EXPECT(RAMPART_STATUS_DISABLE_FAILED, rampart_service_disable_2fa(service, partner, CONTACT_A, code, NULL));
    EXPECT(RAMPART_STATUS_ENABLE_FAILED, rampart_service_enable_2fa(service, partner, CONTACT_B, pending_code, NULL));
    EXPECT(RAMPART_STATUS_INTERNAL, rampart_service_ping(service));
    assert(strcmp(last_message(), "Internal server error") == 0);

    /* faults off: nothing was consumed, everything works again */
    OK(rampart_service_set_faults(service, false, false, false));
    assert(verify(service, partner, CONTACT_A, code));
    OK(rampart_service_enable_2fa(service, partner, CONTACT_B, pending_code, NULL));

    /* only faulty handles take faults */
    rampart_service *plain = open_manual(true);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_set_faults(plain, true, true, true));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_set_faults(NULL, true, true, true));
    rampart_service_free(plain);

    char *strings[] = {partner, secret, pending, code, pending_code};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(service);
}

/* A key file line `id:abab...` (32 bytes of 0xab), appended (mode "a") or alone (mode "w"). */
static void put_key_line(const char *path, const char *mode, int id) {
    FILE *f = fopen(path, mode);
    assert(f != NULL);
    fprintf(f, "\n%d:", id);
    for (int i = 0; i < 32; i++) fprintf(f, "ab");
    fprintf(f, "\n");
    fclose(f);
}

static void test_sqlite(const char *dir) {
    char db[512], key_file[512];
    snprintf(db, sizeof db, "%s/rampart.db", dir);
    snprintf(key_file, sizeof key_file, "%s/rampart.db.key", dir);
    rampart_config config = rampart_config_default();
    config.clock = manual_clock;
    config.clock_context = &now;

    /* sandbox without a key: the key file is generated beside the database, both 0600 */
    rampart_service *service = NULL;
    OK(rampart_service_open(db, &config, &service));
    struct stat st;
    assert(stat(db, &st) == 0 && (st.st_mode & 0777) == 0600);
    assert(stat(key_file, &st) == 0 && (st.st_mode & 0777) == 0600);
    char *partner = new_partner(service, NULL);
    char *secret = create(service, partner, CONTACT_A);
    enable_now(service, partner, CONTACT_A, secret);
    rampart_service_free(service);

    /* reopened: the state and the key are kept */
    service = NULL;
    OK(rampart_service_open(db, &config, &service));
    assert(status(service, partner, CONTACT_A));
    now += 30;
    char *code = code_at(secret, now);
    assert(verify(service, partner, CONTACT_A, code));
    rampart_string_free(code);
    rampart_service_free(service);

    /* a newer key added to the key file, then rewrap: the old key can go */
    put_key_line(key_file, "a", 9); /* appended: key 1 stays */
    OK(rampart_service_open(db, &config, &service));
    rampart_rewrap_report report;
    memset(&report, 0xff, sizeof report);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_rewrap_secrets(service, "", &report));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_rewrap_secrets(service, OPERATOR, NULL));
    OK(rampart_service_rewrap_secrets(service, OPERATOR, &report));
    assert(report.key_id == 9 && report.examined == 1 && report.rewrapped == 1 && report.unopenable == 0);
    OK(rampart_service_rewrap_secrets(service, OPERATOR, &report));
    assert(report.examined == 1 && report.rewrapped == 0);
    rampart_service_free(service);
    put_key_line(key_file, "w", 9); /* key 1 removed */
    OK(rampart_service_open(db, &config, &service));
    now += 30;
    code = code_at(secret, now);
    assert(verify(service, partner, CONTACT_A, code));
    rampart_string_free(code);
    rampart_service_free(service);

    /* the key file checks at open, each naming the file; the key itself is never shown */
    char want[1400];
    service = (rampart_service *)1;
    assert(chmod(key_file, 0644) == 0); /* readable by others: refused, naming the mode */
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open(db, &config, &service));
    snprintf(want, sizeof want, "master key file %s: has mode 0644; it must be readable by its owner only (chmod 600 %s)",
             key_file, key_file);
    assert(strcmp(last_message(), want) == 0);
    assert(chmod(key_file, 0640) == 0);
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open(db, &config, &service));
    assert(strstr(last_message(), "has mode 0640") != NULL);
    assert(chmod(key_file, 0600) == 0);
    put_key_line(key_file, "a", 9); /* key id 9 twice: refused, naming both lines */
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open(db, &config, &service));
    snprintf(want, sizeof want, "master key file %s: line 4: key id 9 is given twice (first on line 2)", key_file);
    assert(strcmp(last_message(), want) == 0);
    assert(strstr(last_message(), "abab") == NULL);
    put_key_line(key_file, "w", 9);
    assert(service == (rampart_service *)1);

    /* another master key opens none of the stored secrets: refused at open, not at first use */
    uint8_t other_key[32];
    memset(other_key, 0x42, sizeof other_key);
    config.master_key = other_key;
    config.master_key_len = sizeof other_key;
    config.master_key_id = 9;
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open(db, &config, &service));
    assert(strcmp(last_message(), "master key ring: key id 9 opens none of the stored 2FA secrets sealed under it") == 0);
    config.master_key_id = 1;
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open(db, &config, &service));
    assert(strcmp(last_message(), "master key ring: stored 2FA secrets are sealed under key id 9, which it does not "
                                  "hold; put that key back") == 0);
    assert(service == (rampart_service *)1);
    config = rampart_config_default();
    config.clock = manual_clock;
    config.clock_context = &now;

    /* the key file deleted while a contact has 2FA enabled: refused, naming the missing file, and
     * no new key is written (it would lock every such contact out) */
    assert(unlink(key_file) == 0);
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open(db, &config, &service));
    snprintf(want, sizeof want,
             "master key file %s is missing, but the database holds 2FA secrets sealed under it: restore the file "
             "(a new key would lock out every contact with 2FA)",
             key_file);
    assert(strcmp(last_message(), want) == 0);
    assert(access(key_file, F_OK) != 0);
    assert(service == (rampart_service *)1);
    put_key_line(key_file, "w", 9); /* restored */
    assert(chmod(key_file, 0600) == 0);
    OK(rampart_service_open(db, &config, &service));
    now += 30;
    code = code_at(secret, now);
    assert(verify(service, partner, CONTACT_A, code));
    rampart_string_free(code);
    rampart_service_free(service);

    /* production without a key refuses, and creates nothing */
    char db2[512];
    snprintf(db2, sizeof db2, "%s/production.db", dir);
    config = rampart_config_default();
    config.environment = RAMPART_ENVIRONMENT_PRODUCTION;
    service = (rampart_service *)1;
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open(db2, &config, &service));
    assert(access(db2, F_OK) != 0);
    config.window = 9;
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open(db2, &config, &service));
    assert(access(db2, F_OK) != 0);

    /* a database that cannot be opened: CONFIG, with the cause for the log */
    config = rampart_config_default();
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open("/nonexistent-dir/x/rampart.db", &config, &service));
    assert(strcmp(last_message(), "cannot open the database") == 0);
    char cause[256];
    assert(rampart_last_error_cause(cause, sizeof cause) > 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_open(NULL, &config, &service));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_open(db, NULL, &service));
    assert(service == (rampart_service *)1);

    rampart_string_free(partner);
    rampart_string_free(secret);
    unlink(db);
    unlink(key_file);
    char side[600];
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
}

/* The audit trail (SPEC section 9.1) and metrics (9.2): pages read back row by row in the core's
 * member order, every row's hash recomputed here (SHA-256 below, the RFC 8785 canonical JSON
 * built by hand), each `prev` the previous row's hash, paging with `after` and `next`, the
 * contact filter, the chain reports, and each handle's own metrics. */

/* SHA-256 (FIPS 180-4), written out so the check does not trust the library it checks. */
static const uint32_t SHA_K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(uint32_t h[8], const unsigned char block[64]) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++) {
        w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 | (uint32_t)block[4 * i + 2] << 8 |
               (uint32_t)block[4 * i + 3];
    }
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + SHA_K[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

/* Lowercase hex SHA-256 of `len` bytes into `hex` (65 bytes). */
static void sha256_hex(const char *data, size_t len, char hex[65]) {
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    unsigned char block[64];
    size_t done = 0;
    for (; len - done >= 64; done += 64) sha256_block(h, (const unsigned char *)data + done);
    size_t rest = len - done;
    memset(block, 0, sizeof block);
    memcpy(block, data + done, rest);
    block[rest] = 0x80;
    if (rest >= 56) {
        sha256_block(h, block);
        memset(block, 0, sizeof block);
    }
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++) block[63 - i] = (unsigned char)(bits >> (8 * i));
    sha256_block(h, block);
    for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", h[i]);
}

/* One audit row as read from the JSON, its strings unescaped (the test's values have no
 * escapes: a row holding one fails the read). `details` is the object's raw JSON text. */
struct audit_row {
    unsigned long long seq;
    char id[40], at[32], partner[40], contact[40], actor[64], event[64], details[128], prev[65], hash[65];
    bool has_contact;
};

static const char *expect_text(const char *p, const char *text) {
    if (strncmp(p, text, strlen(text)) != 0) fprintf(stderr, "  want %s at: %.60s\n", text, p);
    assert(strncmp(p, text, strlen(text)) == 0);
    return p + strlen(text);
}

static const char *read_text(const char *p, char *out, size_t cap) {
    p = expect_text(p, "\"");
    size_t n = 0;
    while (*p != '"') {
        assert(*p != '\\' && *p != '\0' && n + 1 < cap);
        out[n++] = *p++;
    }
    out[n] = '\0';
    return p + 1;
}

/* A JSON object copied as it stands (nested objects counted; no escapes, as above). */
static const char *read_object(const char *p, char *out, size_t cap) {
    assert(*p == '{');
    size_t n = 0;
    int depth = 0;
    bool in_text = false;
    do {
        assert(*p != '\0' && *p != '\\' && n + 1 < cap);
        if (*p == '"') in_text = !in_text;
        if (!in_text && *p == '{') depth++;
        if (!in_text && *p == '}') depth--;
        out[n++] = *p++;
    } while (depth > 0);
    out[n] = '\0';
    return p;
}

/* One row, its members exactly in the core's order. Returns the text after it. */
static const char *read_row(const char *p, struct audit_row *row) {
    char *end = NULL;
    p = expect_text(p, "{\"seq\":");
    row->seq = strtoull(p, &end, 10);
    assert(end != p);
    p = read_text(expect_text(end, ",\"id\":"), row->id, sizeof row->id);
    p = read_text(expect_text(p, ",\"at\":"), row->at, sizeof row->at);
    p = read_text(expect_text(p, ",\"partnerId\":"), row->partner, sizeof row->partner);
    p = expect_text(p, ",\"contactId\":");
    row->has_contact = *p != 'n';
    if (row->has_contact) {
        p = read_text(p, row->contact, sizeof row->contact);
    } else {
        p = expect_text(p, "null");
        row->contact[0] = '\0';
    }
    p = read_text(expect_text(p, ",\"actor\":"), row->actor, sizeof row->actor);
    p = read_text(expect_text(p, ",\"event\":"), row->event, sizeof row->event);
    p = read_object(expect_text(p, ",\"details\":"), row->details, sizeof row->details);
    p = read_text(expect_text(p, ",\"prev\":"), row->prev, sizeof row->prev);
    p = read_text(expect_text(p, ",\"hash\":"), row->hash, sizeof row->hash);
    return expect_text(p, "}");
}

/* A page: its rows (at most `cap`) and `next` (0 for null). Returns the number of rows. */
static size_t read_page(const char *json, struct audit_row *rows, size_t cap, unsigned long long *next) {
    const char *p = expect_text(json, "{\"events\":[");
    size_t n = 0;
    while (*p == '{') {
        assert(n < cap);
        p = read_row(p, &rows[n++]);
        if (*p == ',') p++;
    }
    p = expect_text(p, "],\"next\":");
    if (*p == 'n') {
        p = expect_text(p, "null");
        *next = 0;
    } else {
        char *end = NULL;
        *next = strtoull(p, &end, 10);
        assert(end != p && *next > 0);
        p = end;
    }
    assert(strcmp(p, "}") == 0);
    return n;
}

/* The hash the row must carry: hex SHA-256 of the RFC 8785 canonical JSON of its other nine
 * members, keys sorted (the details of these rows have at most one member, so their compact
 * text is already canonical). */
static void check_hash(const struct audit_row *row) {
    char contact[48], canonical[1024], hex[65];
    snprintf(contact, sizeof contact, row->has_contact ? "\"%s\"" : "null", row->contact);
    int n = snprintf(canonical, sizeof canonical,
                     "{\"actor\":\"%s\",\"at\":\"%s\",\"contactId\":%s,\"details\":%s,\"event\":\"%s\",\"id\":\"%s\","
                     "\"partnerId\":\"%s\",\"prev\":\"%s\",\"seq\":%llu}",
                     row->actor, row->at, contact, row->details, row->event, row->id, row->partner, row->prev,
                     row->seq);
    assert(n > 0 && (size_t)n < sizeof canonical);
    sha256_hex(canonical, (size_t)n, hex);
    if (strcmp(hex, row->hash) != 0) fprintf(stderr, "  %s\n  hashes to %s, row says %s\n", canonical, hex, row->hash);
    assert(strcmp(hex, row->hash) == 0);
}

static char *audit_page(const rampart_service *service, const char *partner, const char *contact, uint64_t after,
                        uint32_t limit) {
    char *json = NULL;
    OK(rampart_service_audit_events(service, partner, contact, after, limit, &json));
    assert(json != NULL);
    return json;
}

static void expect_text_is(char *got, const char *want) {
    if (strcmp(got, want) != 0) fprintf(stderr, "  want %s\n  got  %s\n", want, got);
    assert(strcmp(got, want) == 0);
    rampart_string_free(got);
}

static void test_audit_trail(void) {
    /* the SHA-256 itself, on FIPS 180-4's examples (one block, two blocks) */
    char hex[65];
    sha256_hex("abc", 3, hex);
    assert(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(two, strlen(two), hex);
    assert(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);

    now = 1800000000; /* 2027-01-15T08:00:00Z */
    rampart_service *service = open_manual(true);
    char *partner = new_partner(service, NULL);
    char *quiet = new_partner(service, NULL); /* a partner with no rows */
    char *secret = create(service, partner, CONTACT_A);             /* 1 2fa.created */
    enable_now(service, partner, CONTACT_A, secret);                /* 2 2fa.enabled, 3 recovery_codes.issued */
    OK(rampart_service_set_kyc_passed(service, OPERATOR, partner, CONTACT_B, true)); /* 4 kyc.marked */
    OK(rampart_service_set_widget_approval(service, OPERATOR, partner, true));       /* 5 widget.approved */
    assert(!verify(service, partner, CONTACT_A, "junk"));
    OK(rampart_service_reset_lock(service, OPERATOR, partner, CONTACT_A)); /* 6 2fa.unlocked, 1 failure */
    now += 30;
    char *code = code_at(secret, now);
    OK(rampart_service_disable_2fa(service, partner, CONTACT_A, code, NULL)); /* 7 2fa.disabled at +30 s */

    /* the whole chain: exact rows, each hash recomputed, each prev the hash before */
    static const struct {
        const char *contact, *actor, *event, *details, *at;
    } want[] = {
        {CONTACT_A, "partner", "2fa.created", "{}", "2027-01-15T08:00:00.000Z"},
        {CONTACT_A, "partner", "2fa.enabled", "{}", "2027-01-15T08:00:00.000Z"},
        {CONTACT_A, "partner", "recovery_codes.issued", "{\"reason\":\"enable\"}", "2027-01-15T08:00:00.000Z"},
        {CONTACT_B, "operator:" OPERATOR, "kyc.marked", "{}", "2027-01-15T08:00:00.000Z"},
        {NULL, "operator:" OPERATOR, "widget.approved", "{}", "2027-01-15T08:00:00.000Z"},
        {CONTACT_A, "operator:" OPERATOR, "2fa.unlocked", "{\"failures\":1}", "2027-01-15T08:00:00.000Z"},
        {CONTACT_A, "partner", "2fa.disabled", "{\"method\":\"token\"}", "2027-01-15T08:00:30.000Z"},
    };
    struct audit_row rows[8], page[8];
    unsigned long long next = 99;
    char *json = audit_page(service, partner, NULL, 0, 500);
    size_t n = read_page(json, rows, 8, &next);
    rampart_string_free(json);
    assert(n == 7 && next == 0);
    for (size_t i = 0; i < n; i++) {
        assert(rows[i].seq == i + 1);
        assert(strlen(rows[i].id) == 36 && rows[i].id[14] == '7'); /* a version 7 (time-ordered) UUID */
        assert(strcmp(rows[i].partner, partner) == 0);
        assert(rows[i].has_contact == (want[i].contact != NULL));
        assert(!rows[i].has_contact || strcmp(rows[i].contact, want[i].contact) == 0);
        assert(strcmp(rows[i].actor, want[i].actor) == 0);
        assert(strcmp(rows[i].event, want[i].event) == 0);
        assert(strcmp(rows[i].details, want[i].details) == 0);
        assert(strcmp(rows[i].at, want[i].at) == 0);
        const char *genesis = "0000000000000000000000000000000000000000000000000000000000000000";
        const char *prev = i == 0 ? genesis : rows[i - 1].hash;
        assert(strcmp(rows[i].prev, prev) == 0);
        assert(strlen(rows[i].hash) == 64);
        check_hash(&rows[i]);
    }

    /* paging: limit 2 from the start, then after each page's next; the last page's next is null */
    unsigned long long after = 0;
    for (int p = 0; p < 4; p++) {
        json = audit_page(service, partner, NULL, after, 2);
        size_t got = read_page(json, page, 8, &next);
        rampart_string_free(json);
        assert(got == (p < 3 ? 2u : 1u));
        for (size_t i = 0; i < got; i++) {
            assert(page[i].seq == after + 1 + i);
            assert(strcmp(page[i].hash, rows[after + i].hash) == 0);
        }
        assert(next == (p < 3 ? after + 2 : 0));
        after += got;
    }
    json = audit_page(service, partner, NULL, 4, 500);
    assert(read_page(json, page, 8, &next) == 3 && page[0].seq == 5 && next == 0);
    rampart_string_free(json);
    json = audit_page(service, partner, NULL, 7, 1);
    expect_text_is(json, "{\"events\":[],\"next\":null}");
    json = audit_page(service, quiet, NULL, 0, 100);
    expect_text_is(json, "{\"events\":[],\"next\":null}");

    /* the contact filter, paged too; upper case is the same contact */
    json = audit_page(service, partner, CONTACT_A, 0, 3);
    assert(read_page(json, page, 8, &next) == 3);
    rampart_string_free(json);
    assert(page[0].seq == 1 && page[1].seq == 2 && page[2].seq == 3 && next == 3);
    json = audit_page(service, partner, "6F1C2A4E-93B1-4C55-8F1E-0B9B6A0D2C11", next, 3);
    assert(read_page(json, page, 8, &next) == 2 && page[0].seq == 6 && page[1].seq == 7 && next == 0);
    rampart_string_free(json);
    json = audit_page(service, partner, CONTACT_B, 0, 500);
    assert(read_page(json, page, 8, &next) == 1 && page[0].seq == 4 && next == 0);
    assert(strcmp(page[0].hash, rows[3].hash) == 0);
    rampart_string_free(json);
    json = audit_page(service, partner, CONTACT_E, 0, 500);
    expect_text_is(json, "{\"events\":[],\"next\":null}");

    /* bad arguments: the argument's own status and message, the out-pointer untouched */
    json = (char *)1;
    expect_invalid(rampart_service_audit_events(service, partner, NULL, 0, 0, &json),
                   "limit must be an integer from 1 to 500");
    expect_invalid(rampart_service_audit_events(service, partner, NULL, 0, 501, &json),
                   "limit must be an integer from 1 to 500");
    expect_invalid(rampart_service_audit_events(service, partner, NULL, 0, UINT32_MAX, &json),
                   "limit must be an integer from 1 to 500");
    expect_invalid(rampart_service_audit_events(service, partner, NULL, (uint64_t)INT64_MAX + 1, 10, &json),
                   "after must be an integer from 0 to 9223372036854775807");
    expect_invalid(rampart_service_audit_events(NULL, partner, NULL, 0, 10, &json), "service must not be NULL");
    expect_invalid(rampart_service_audit_events(service, NULL, NULL, 0, 10, &json), "partner_id must not be NULL");
    expect_invalid(rampart_service_audit_events(service, "acme", NULL, 0, 10, &json), "partnerId must be a UUID");
    expect_invalid(rampart_service_audit_events(service, "\xff", NULL, 0, 10, &json),
                   "partner_id must be valid Unicode text");
    expect_invalid(rampart_service_audit_events(service, partner, NULL, 0, 10, NULL), "out_json must not be NULL");
    const char *bad_contacts[] = {"", "not-a-uuid", "\xff"};
    for (size_t i = 0; i < 3; i++) {
        EXPECT(RAMPART_STATUS_CONTACT_ID_INVALID,
               rampart_service_audit_events(service, partner, bad_contacts[i], 0, 10, &json));
        assert(strcmp(last_message(), "contactId must be a UUID") == 0);
    }
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND, rampart_service_audit_events(service, NO_PARTNER, NULL, 0, 10, &json));
    assert(strcmp(last_message(), "Partner not found") == 0);
    assert(rampart_status_code(RAMPART_STATUS_PARTNER_NOT_FOUND) == 404);
    assert(json == (char *)1);

    /* the chain reports: one partner, every partner (in id order), errors */
    char want_one[160], want_quiet[160], want_all[400];
    snprintf(want_one, sizeof want_one, "{\"partnerId\":\"%s\",\"rows\":7,\"firstBadSeq\":null}", partner);
    snprintf(want_quiet, sizeof want_quiet, "{\"partnerId\":\"%s\",\"rows\":0,\"firstBadSeq\":null}", quiet);
    bool partner_first = strcmp(partner, quiet) < 0;
    snprintf(want_all, sizeof want_all, "[%s,%s]", partner_first ? want_one : want_quiet,
             partner_first ? want_quiet : want_one);
    OK(rampart_service_verify_audit(service, NULL, &json));
    expect_text_is(json, want_all);
    char want_list[200];
    snprintf(want_list, sizeof want_list, "[%s]", want_one);
    OK(rampart_service_verify_audit(service, partner, &json));
    expect_text_is(json, want_list);
    json = (char *)1;
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND, rampart_service_verify_audit(service, NO_PARTNER, &json));
    expect_invalid(rampart_service_verify_audit(NULL, NULL, &json), "service must not be NULL");
    expect_invalid(rampart_service_verify_audit(service, "acme", &json), "partnerId must be a UUID");
    expect_invalid(rampart_service_verify_audit(service, "\xc3\x28", &json), "partner_id must be valid Unicode text");
    expect_invalid(rampart_service_verify_audit(service, partner, NULL), "out_json must not be NULL");
    assert(json == (char *)1);

    char *strings[] = {partner, quiet, secret, code};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(service);
}

/* Metrics: Prometheus text of the handle's own registry; two handles in one process count apart. */
static void test_metrics(void) {
    static const char ENABLED[] =
        "\nrampart_2fa_attempts_total{operation=\"enable\",factor=\"token\",result=\"accepted\"} 1\n";
    rampart_service *a = open_manual(true);
    rampart_service *b = open_manual(true);
    char *partner = new_partner(a, NULL);
    char *secret = create(a, partner, CONTACT_A);
    enable_now(a, partner, CONTACT_A, secret);
    char *text = NULL;
    OK(rampart_service_metrics_text(a, &text));
    if (strstr(text, ENABLED) == NULL) fprintf(stderr, "%s", text);
    assert(strstr(text, ENABLED) != NULL);
    assert(strstr(text, "\nrampart_2fa_transitions_total{transition=\"enabled\"} 1\n") != NULL);
    assert(strstr(text, "\nrampart_audit_events{event=\"2fa.enabled\"} 1\n") != NULL);
    assert(strstr(text, "# TYPE rampart_2fa_attempts_total counter\n") != NULL);
    rampart_string_free(text);
    /* b saw none of it */
    OK(rampart_service_metrics_text(b, &text));
    assert(strstr(text, "rampart_2fa_attempts_total{") == NULL);
    assert(strstr(text, "rampart_2fa_transitions_total{") == NULL);
    assert(strstr(text, "\nrampart_build_info{") != NULL || starts_with(text, "rampart_build_info{"));
    rampart_string_free(text);
    /* a second enable on a's partner counts 2 there, still nothing on b */
    char *other = create(a, partner, CONTACT_B);
    enable_now(a, partner, CONTACT_B, other);
    OK(rampart_service_metrics_text(a, &text));
    assert(strstr(text, "{operation=\"enable\",factor=\"token\",result=\"accepted\"} 2\n") != NULL);
    rampart_string_free(text);
    OK(rampart_service_metrics_text(b, &text));
    assert(strstr(text, "operation=\"enable\"") == NULL);
    rampart_string_free(text);

    text = (char *)1;
    expect_invalid(rampart_service_metrics_text(NULL, &text), "service must not be NULL");
    expect_invalid(rampart_service_metrics_text(a, NULL), "out_text must not be NULL");
    assert(text == (char *)1);

    char *strings[] = {partner, secret, other};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(a);
    rampart_service_free(b);
}

static void test_pure_helpers(void) {
    char *secret = NULL, *uri = NULL, *qr = NULL;
    OK(rampart_totp_new_secret("Acme", "jane@example.com", &secret, &uri, &qr));
    assert(strlen(secret) == 32);
    assert(starts_with(uri, "otpauth://totp/Acme:jane%40example.com?secret="));
    assert(starts_with(qr, "data:image/png;base64,"));
    char *only = NULL;
    OK(rampart_totp_new_secret("Acme", "x", &only, NULL, NULL));
    assert(strcmp(only, secret) != 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_new_secret(NULL, "x", &only, NULL, NULL));
    EXPECT(RAMPART_STATUS_ISSUER_INVALID, rampart_totp_new_secret("Acme\xff", "x", &only, NULL, NULL));
    assert(strcmp(last_message(), ISSUER_MESSAGE) == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_new_secret("Acme", "\xe2\x28\xa1", &only, NULL, NULL));
    assert(strcmp(last_message(), "account must be valid Unicode text") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_new_secret("Acme", "x", NULL, NULL, NULL));

    uint64_t t = 1700000000;
    char *code = code_at(secret, t);
    bool accepted = false;
    uint64_t step = 0;
    OK(rampart_totp_verify(secret, code, t, 0, &accepted, &step));
    assert(accepted && step == t / 30);
    OK(rampart_totp_verify(secret, code, t + 30, 1, &accepted, &step));
    assert(accepted && step == t / 30);
    OK(rampart_totp_verify(secret, code, t + 90, 2, &accepted, NULL));
    OK(rampart_totp_verify(secret, code, t + 30, 0, &accepted, &step));
    assert(!accepted && step == 0);
    OK(rampart_totp_verify(secret, NULL, t, 1, &accepted, &step));
    assert(!accepted);
    OK(rampart_totp_verify(secret, "\xff", t, 1, &accepted, &step));
    assert(!accepted);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_verify(secret, code, t, 3, &accepted, &step));
    assert(strcmp(last_message(), "window must be 0, 1 or 2") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_verify("not base32!", code, t, 1, &accepted, &step));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_verify("AAAA", code, t, 1, &accepted, &step));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_verify(NULL, code, t, 1, &accepted, &step));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_verify(secret, code, t, 1, NULL, &step));
    char *out = (char *)1;
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_code_at("\xff", t, &out));
    assert(strcmp(last_message(), "secret must be valid Unicode text") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_hotp(secret, 1, NULL));
    assert(out == (char *)1);

    rampart_token_kind kind = RAMPART_TOKEN_CODE;
    OK(rampart_token_parse(NULL, &kind, &out));
    assert(kind == RAMPART_TOKEN_MISSING && out == NULL);
    OK(rampart_token_parse(" 012 345 ", &kind, &out));
    assert(kind == RAMPART_TOKEN_CODE && strcmp(out, "012345") == 0);
    rampart_string_free(out);
    OK(rampart_token_parse("\xff\xfe", &kind, NULL));
    assert(kind == RAMPART_TOKEN_MALFORMED);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_token_parse("123456", NULL, NULL));

    char *strings[] = {secret, uri, qr, only, code};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
}

/* Recovery (SPEC section 8): enable hands out 10 codes in a handle that wipes them; a code
 * verifies once (method, count), a used one is rejected, both factors are a 400 of their own, a
 * code disables and starts the purchase hold; regenerate replaces the set; the operator's reset
 * with the four-eyes rule in production; the support view. */
static const char ALPHABET[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

static void assert_code_format(const char *code) {
    assert(code != NULL && strlen(code) == 29);
    for (size_t i = 0; i < 29; i++) {
        if (i % 5 == 4) {
            assert(code[i] == '-');
        } else {
            assert(code[i] != '\0' && strchr(ALPHABET, code[i]) != NULL);
        }
    }
}

/* A copy of code `i` of a set (the set lends its strings until it is freed). */
static void code_copy(const rampart_recovery_codes *codes, size_t i, char out[32]) {
    const char *code = rampart_recovery_codes_at(codes, i);
    assert_code_format(code);
    snprintf(out, 32, "%s", code);
}

static uint32_t remaining(const rampart_service *service, const char *partner, const char *contact) {
    uint32_t n = 99;
    OK(rampart_service_recovery_codes_remaining(service, partner, contact, &n));
    return n;
}

static void test_recovery(void) {
    rampart_service *service = open_manual(true);
    char *partner = new_partner(service, NULL);
    char *secret = create(service, partner, CONTACT_A);
    assert(remaining(service, partner, CONTACT_A) == 0);

    /* enable: 10 well-formed, distinct codes */
    rampart_recovery_codes *codes = NULL;
    char *code = code_at(secret, now);
    OK(rampart_service_enable_2fa(service, partner, CONTACT_A, code, &codes));
    rampart_string_free(code);
    assert(rampart_recovery_codes_count(codes) == 10);
    char sheet[10][32];
    for (size_t i = 0; i < 10; i++) {
        code_copy(codes, i, sheet[i]);
        for (size_t j = 0; j < i; j++) assert(strcmp(sheet[i], sheet[j]) != 0);
    }
    assert(rampart_recovery_codes_at(codes, 10) == NULL && rampart_recovery_codes_at(NULL, 0) == NULL);
    assert(rampart_recovery_codes_count(NULL) == 0);
    rampart_recovery_codes_free(codes);
    rampart_recovery_codes_free(NULL);
    assert(remaining(service, partner, CONTACT_A) == 10);

    /* verify by recovery code, typed in lower case with spaces: accepted, used up, 9 left */
    char typed[40];
    snprintf(typed, sizeof typed, " %s ", sheet[0]);
    for (char *c = typed; *c; c++) {
        if (*c == '-') *c = ' ';
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c + 32);
    }
    bool accepted = false;
    rampart_verify_method method = RAMPART_VERIFY_METHOD_NONE;
    uint32_t left = 0;
    OK(rampart_service_verify_2fa(service, partner, CONTACT_A, NULL, typed, &accepted, &method, &left));
    assert(accepted && method == RAMPART_VERIFY_METHOD_RECOVERY_CODE && left == 9);
    assert(status(service, partner, CONTACT_A) && remaining(service, partner, CONTACT_A) == 9);
    /* the same code again: rejected (not an error), nothing counted */
    OK(rampart_service_verify_2fa(service, partner, CONTACT_A, NULL, sheet[0], &accepted, &method, &left));
    assert(!accepted && method == RAMPART_VERIFY_METHOD_NONE && left == 0);
    /* a wrong code, and bytes that are not UTF-8: rejected the same way */
    OK(rampart_service_verify_2fa(service, partner, CONTACT_A, NULL, "0000-0000-0000-0000-0000-0000", &accepted, NULL,
                                  NULL));
    assert(!accepted);
    OK(rampart_service_verify_2fa(service, partner, CONTACT_A, "", "\xff\xfe", &accepted, NULL, NULL));
    assert(!accepted);
    /* an authenticator code says so, with the same count */
    now += 30;
    code = code_at(secret, now);
    OK(rampart_service_verify_2fa(service, partner, CONTACT_A, code, NULL, &accepted, &method, &left));
    assert(accepted && method == RAMPART_VERIFY_METHOD_TOKEN && left == 9);
    rampart_string_free(code);
    /* a blank recovery code is not given: the token alone counts (here, none: missing) */
    EXPECT(RAMPART_STATUS_TOKEN_MISSING,
           rampart_service_verify_2fa(service, partner, CONTACT_A, NULL, " \t", &accepted, NULL, NULL));

    /* both factors: 400 factor_conflict, before anything is evaluated; outputs untouched */
    accepted = true;
    method = RAMPART_VERIFY_METHOD_TOKEN;
    EXPECT(RAMPART_STATUS_FACTOR_CONFLICT,
           rampart_service_verify_2fa(service, partner, CONTACT_A, "123456", sheet[1], &accepted, &method, NULL));
    assert(accepted && method == RAMPART_VERIFY_METHOD_TOKEN);
    assert(rampart_status_code(RAMPART_STATUS_FACTOR_CONFLICT) == 400);
    assert(strcmp(last_message(), "Give token or recoveryCode, not both") == 0);
    char name[64];
    rampart_last_error_code(name, sizeof name);
    assert(strcmp(name, "factor_conflict") == 0);
    assert(strcmp(rampart_status_name(RAMPART_STATUS_FACTOR_CONFLICT), "factor_conflict") == 0);
    EXPECT(RAMPART_STATUS_FACTOR_CONFLICT,
           rampart_service_disable_2fa(service, partner, CONTACT_A, "123456", "\xff"));
    EXPECT(RAMPART_STATUS_FACTOR_CONFLICT, rampart_service_disable_2fa(service, partner, CONTACT_A, "x", sheet[1]));
    assert(remaining(service, partner, CONTACT_A) == 9 && status(service, partner, CONTACT_A));

    /* regenerate: an authenticator code only; the old set dies at once */
    codes = (rampart_recovery_codes *)1;
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_service_regenerate_recovery_codes(service, partner, CONTACT_A, "123456", NULL));
    assert(strcmp(last_message(), "out_codes must not be NULL") == 0);
    EXPECT(RAMPART_STATUS_TOKEN_MISSING,
           rampart_service_regenerate_recovery_codes(service, partner, CONTACT_A, NULL, &codes));
    assert(codes == (rampart_recovery_codes *)1);
    now += 30;
    code = code_at(secret, now);
    OK(rampart_service_regenerate_recovery_codes(service, partner, CONTACT_A, code, &codes));
    rampart_string_free(code);
    assert(rampart_recovery_codes_count(codes) == 10);
    char fresh[32];
    code_copy(codes, 3, fresh);
    rampart_recovery_codes_free(codes);
    assert(remaining(service, partner, CONTACT_A) == 10);
    OK(rampart_service_verify_2fa(service, partner, CONTACT_A, NULL, sheet[1], &accepted, NULL, NULL));
    assert(!accepted);

    /* the purchase hold is 0 before any recovery */
    rampart_purchase_check check = RAMPART_PURCHASE_ON_HOLD;
    uint64_t until = 1;
    OK(rampart_service_purchase_check(service, partner, CONTACT_A, &check, &until));
    assert(check == RAMPART_PURCHASE_ALLOWED && until == 0);

    /* disable by recovery code: 2FA off, every code gone, the hold starts (default 24 h) */
    OK(rampart_service_disable_2fa(service, partner, CONTACT_A, NULL, fresh));
    assert(!status(service, partner, CONTACT_A) && remaining(service, partner, CONTACT_A) == 0);
    OK(rampart_service_purchase_check(service, partner, CONTACT_A, &check, &until));
    assert(check == RAMPART_PURCHASE_ON_HOLD && until == now + 86400);
    bool allowed = true;
    OK(rampart_service_may_purchase(service, partner, CONTACT_A, &allowed));
    assert(!allowed);
    rampart_contact_state state;
    memset(&state, 0xff, sizeof state);
    OK(rampart_service_contact_state(service, partner, CONTACT_A, &state));
    assert(!state.enabled && !state.locked && state.failures == 0 && state.recovery_failures == 0);
    assert(state.recovery_codes_remaining == 0 && !state.kyc_passed && state.purchase_hold_until == now + 86400);
    EXPECT(RAMPART_STATUS_NOT_ENABLED,
           rampart_service_regenerate_recovery_codes(service, partner, CONTACT_A, "123456", &codes));
    EXPECT(RAMPART_STATUS_NOT_ENABLED, rampart_service_disable_2fa(service, partner, CONTACT_A, NULL, fresh));
    now += 86400;
    OK(rampart_service_purchase_check(service, partner, CONTACT_A, &check, NULL));
    assert(check == RAMPART_PURCHASE_ALLOWED);
    OK(rampart_service_contact_state(service, partner, CONTACT_A, &state));
    assert(state.purchase_hold_until == 0);

    /* the KYC rule comes first: a KYC-passed contact without 2FA must set it up */
    OK(rampart_service_set_kyc_passed(service, OPERATOR, partner, CONTACT_A, true));
    OK(rampart_service_purchase_check(service, partner, CONTACT_A, &check, &until));
    assert(check == RAMPART_PURCHASE_TWO_FACTOR_REQUIRED && until == 0);

    /* the operator's reset of a production partner's contact: four eyes */
    char *live = NULL, *live_key = NULL, *live_pk = NULL;
    OK(rampart_service_create_partner(service, "Live", RAMPART_ENVIRONMENT_PRODUCTION, &live, &live_key, &live_pk));
    char *live_secret = create(service, live, CONTACT_B);
    enable_now(service, live, CONTACT_B, live_secret);
    assert(!verify(service, live, CONTACT_B, "000000x"));
    memset(&state, 0xab, sizeof state);
    expect_invalid(rampart_service_reset_2fa(service, OPERATOR, live, CONTACT_B, "lost phone", NULL, &state),
                   "approvedBy is required in production: a second operator must approve the reset");
    expect_invalid(rampart_service_reset_2fa(service, OPERATOR, live, CONTACT_B, "lost phone", "", &state),
                   "approvedBy is required in production: a second operator must approve the reset");
    expect_invalid(rampart_service_reset_2fa(service, OPERATOR, live, CONTACT_B, "lost phone", OPERATOR, &state),
                   "approvedBy must name another operator than the one resetting");
    expect_invalid(rampart_service_reset_2fa(service, OPERATOR, live, CONTACT_B, "", "lead@example.com", &state),
                   "reason must be 1 to 500 characters without control characters");
    expect_invalid(rampart_service_reset_2fa(service, OPERATOR, live, CONTACT_B, NULL, "lead@example.com", &state),
                   "reason must not be NULL");
    expect_invalid(rampart_service_reset_2fa(service, NULL, live, CONTACT_B, "lost phone", "lead", &state),
                   "operator_name must not be NULL");
    assert(state.failures == 0xabababab); /* untouched on failure */
    assert(status(service, live, CONTACT_B));
    OK(rampart_service_reset_2fa(service, OPERATOR, live, CONTACT_B, "lost phone", "lead@example.com", &state));
    assert(state.enabled && !state.locked && state.failures == 1 && state.recovery_codes_remaining == 10);
    assert(state.purchase_hold_until == 0);
    assert(!status(service, live, CONTACT_B) && remaining(service, live, CONTACT_B) == 0);
    OK(rampart_service_contact_state(service, live, CONTACT_B, &state));
    assert(!state.enabled && state.failures == 0 && state.purchase_hold_until == now + 86400);
    /* a sandbox partner's contact needs no second operator; a contact without 2FA is reset too */
    OK(rampart_service_reset_2fa(service, OPERATOR, partner, CONTACT_C, "support ticket 12", NULL, NULL));
    OK(rampart_service_contact_state(service, partner, CONTACT_C, &state));
    assert(!state.enabled && state.purchase_hold_until == now + 86400);
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND,
           rampart_service_reset_2fa(service, OPERATOR, NO_PARTNER, CONTACT_C, "x", NULL, NULL));
    EXPECT(RAMPART_STATUS_PARTNER_NOT_FOUND, rampart_service_contact_state(service, NO_PARTNER, CONTACT_C, &state));
    expect_invalid(rampart_service_contact_state(service, partner, CONTACT_C, NULL), "out_state must not be NULL");
    expect_invalid(rampart_service_purchase_check(service, partner, CONTACT_C, NULL, NULL), "out_check must not be NULL");

    /* a service with no hold at all */
    rampart_config config = rampart_config_default();
    assert(config.purchase_hold_secs == 86400);
    config.purchase_hold_secs = 604801;
    rampart_service *bad = (rampart_service *)1;
    expect_invalid(rampart_service_open_memory(&config, &bad), "purchase_hold_secs must be 0 to 604800");
    assert(bad == (rampart_service *)1);

    char *strings[] = {partner, secret, live, live_key, live_pk, live_secret};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(service);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    test_lifecycle_rows();
    test_throttle_and_lock();
    test_inputs();
    test_partners_and_settings();
    test_widget_embedding();
    test_config();
    test_storage_failures();
    test_sqlite(dir);
    test_audit_trail();
    test_recovery();
    test_metrics();
    test_pure_helpers();
    printf("test_lifecycle: all checks passed\n");
    return 0;
}
