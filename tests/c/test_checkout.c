/* The widget's purchase flow through the C ABI (SPEC section 6.3): a session signs in with an
 * email code and buys in sandbox, the partner reads the orders back (exact JSON, field by
 * field, newest first, paged with `next`), and every new status a call can give: the 404s and
 * 400s of the reads, the session and sign-in 401s, the sign-in throttle with its Retry-After,
 * the 2FA step (403), an unapproved production widget (403) and production purchases (503),
 * an origin that is not registered, storage failures, NULL and non-UTF-8 arguments, and orders
 * kept in SQLite across a reopen. */
#include <time.h>

#include "test_util.h"

#define NO_PARTNER "00000000-0000-4000-8000-000000000000"
#define NO_ORDER "11111111-2222-4333-8444-555555555555"
#define ADDRESS "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
#define EMAIL "ada@example.com"
#define EMAIL_MESSAGE "email must be an email address such as name@example.com"

static uint64_t now = 1700000000; /* the manual clock's time */

static rampart_config manual_config(void) {
    rampart_config config = rampart_config_default();
    config.clock = manual_clock;
    config.clock_context = &now;
    return config;
}

static rampart_service *open_manual(void) {
    rampart_config config = manual_config();
    rampart_service *service = NULL;
    OK(rampart_service_open_memory(&config, &service));
    return service;
}

/* A partner of `environment`: its id, and its publishable key in *out_key. */
static char *new_partner(const rampart_service *service, uint32_t environment, char **out_key) {
    char *id = NULL, *secret_key = NULL;
    OK(rampart_service_create_partner(service, "Acme", environment, &id, &secret_key, out_key));
    rampart_string_free(secret_key);
    return id;
}

/* `call` failed with `want`, whose stable code is `name`, HTTP code `code`, and last message
 * `message`. */
static void expect_error(rampart_status got, rampart_status want, const char *name, uint16_t code,
                         const char *message) {
    EXPECT(want, got);
    assert(rampart_status_code((uint32_t)got) == code);
    assert(strcmp(rampart_status_name((uint32_t)got), name) == 0);
    char last_code[64];
    rampart_last_error_code(last_code, sizeof last_code);
    assert(strcmp(last_code, name) == 0);
    if (strcmp(last_message(), message) != 0) fprintf(stderr, "  want \"%s\", got \"%s\"\n", message, last_message());
    assert(strcmp(last_message(), message) == 0);
}

static void expect_invalid(rampart_status got, const char *message) {
    expect_error(got, RAMPART_STATUS_INVALID_INPUT, "invalid_input", 400, message);
}

static void expect_text(char *got, const char *want) {
    if (strcmp(got, want) != 0) fprintf(stderr, "  want %s\n  got  %s\n", want, got);
    assert(strcmp(got, want) == 0);
    rampart_string_free(got);
}

/* The value of the string field `name` in flat JSON (ids: no escapes), copied into `buf`. */
static void json_text(const char *json, const char *name, char *buf, size_t len) {
    char key[64];
    snprintf(key, sizeof key, "\"%s\":\"", name);
    const char *start = strstr(json, key);
    assert(start != NULL);
    start += strlen(key);
    const char *end = strchr(start, '"');
    assert(end != NULL && (size_t)(end - start) < len);
    memcpy(buf, start, (size_t)(end - start));
    buf[end - start] = '\0';
}

/* A signed-in session for `email` at the partner with this publishable key. */
static char *signed_in(const rampart_service *service, const char *key, const char *email) {
    char *session = NULL, *code = NULL;
    OK(rampart_service_open_session(service, key, NULL, &session, NULL));
    OK(rampart_service_request_sign_in_code(service, session, email, &code, NULL));
    OK(rampart_service_sign_in(service, session, email, code, NULL));
    rampart_string_free(code);
    return session;
}

static char *place(const rampart_service *service, const char *session, const char *amount) {
    char *order = NULL;
    OK(rampart_service_place_order(service, session, "btc", amount, "usd", ADDRESS, NULL, &order));
    return order;
}

static void test_sign_in_and_orders(void) {
    rampart_service *service = open_manual();
    char *key = NULL;
    char *partner = new_partner(service, RAMPART_ENVIRONMENT_SANDBOX, &key);
    char *contact = NULL, *session = NULL, *json = NULL, *code = NULL, *order = NULL;

    /* Before anyone signed in: the reads' 404s and 400s. */
    expect_error(rampart_service_contact_by_email(service, partner, EMAIL, &contact), RAMPART_STATUS_CONTACT_NOT_FOUND,
                 "contact_not_found", 404, "Contact not found");
    expect_invalid(rampart_service_contact_by_email(service, partner, "ada", &contact), EMAIL_MESSAGE);
    expect_error(rampart_service_order(service, partner, NO_ORDER, &order), RAMPART_STATUS_ORDER_NOT_FOUND,
                 "order_not_found", 404, "Order not found");
    expect_invalid(rampart_service_order(service, partner, "42", &order), "orderId must be a UUID");
    expect_error(rampart_service_order(service, NO_PARTNER, NO_ORDER, &order), RAMPART_STATUS_PARTNER_NOT_FOUND,
                 "partner_not_found", 404, "Partner not found");
    expect_error(rampart_service_contact_by_email(service, NO_PARTNER, EMAIL, &contact),
                 RAMPART_STATUS_PARTNER_NOT_FOUND, "partner_not_found", 404, "Partner not found");
    assert(contact == NULL && order == NULL);

    /* A session opens at the top level, or framed by an allowed origin. */
    OK(rampart_service_open_session(service, key, NULL, &session, &json));
    assert(starts_with(session, "ws_") && strlen(session) == 46);
    char want[1024];
    snprintf(want, sizeof want,
             "{\"contactId\":null,\"email\":null,\"environment\":\"sandbox\",\"kycPassed\":false,"
             "\"mayPurchase\":false,\"origin\":\"\",\"partnerId\":\"%s\",\"purchaseHoldUntil\":null,"
             "\"recoveryCodesRemaining\":0,\"signedIn\":false,\"twoFactor\":null}",
             partner);
    expect_text(json, want);
    char *framed = NULL;
    OK(rampart_service_open_session(service, key, "http://localhost:5173", &framed, NULL));
    OK(rampart_service_close_session(service, framed));
    rampart_string_free(framed);
    framed = NULL;
    expect_error(rampart_service_open_session(service, key, "https://evil.example", &framed, NULL),
                 RAMPART_STATUS_ORIGIN_NOT_ALLOWED, "origin_not_allowed", 403, "This site may not embed the widget");
    expect_error(rampart_service_open_session(service, "pk_sandbox_nope", NULL, &framed, NULL),
                 RAMPART_STATUS_PARTNER_NOT_FOUND, "partner_not_found", 404, "Partner not found");
    assert(framed == NULL);

    /* Buying needs a signed-in session. */
    expect_error(rampart_service_place_order(service, session, "btc", "25", "usd", ADDRESS, NULL, &order),
                 RAMPART_STATUS_SIGN_IN_REQUIRED, "sign_in_required", 401, "Sign in to continue");

    /* Sign-in: a code per request, a wrong one counted, the right one signs in. */
    uint64_t expires_in = 0;
    expect_invalid(rampart_service_request_sign_in_code(service, session, "not an email", &code, NULL),
                   EMAIL_MESSAGE);
    OK(rampart_service_request_sign_in_code(service, session, " Ada@Example.COM ", &code, &expires_in));
    assert(strlen(code) == 6 && expires_in == 600);
    const char *wrong = strcmp(code, "000000") == 0 ? "000001" : "000000";
    expect_error(rampart_service_sign_in(service, session, EMAIL, wrong, NULL), RAMPART_STATUS_SIGN_IN_CODE_FAILED,
                 "sign_in_code_failed", 401, "The sign-in code is wrong");
    expect_error(rampart_service_sign_in(service, session, EMAIL, "\xff\xfe", NULL),
                 RAMPART_STATUS_SIGN_IN_CODE_FAILED, "sign_in_code_failed", 401, "The sign-in code is wrong");
    OK(rampart_service_sign_in(service, session, EMAIL, code, &json));
    OK(rampart_service_contact_by_email(service, partner, "  ADA@example.com", &contact));
    assert(strlen(contact) == 36);
    snprintf(want, sizeof want,
             "{\"contactId\":\"%s\",\"email\":\"ada@example.com\",\"environment\":\"sandbox\",\"kycPassed\":false,"
             "\"mayPurchase\":true,\"origin\":\"\",\"partnerId\":\"%s\",\"purchaseHoldUntil\":null,"
             "\"recoveryCodesRemaining\":0,\"signedIn\":true,\"twoFactor\":\"none\"}",
             contact, partner);
    expect_text(json, want);
    /* The code is used up. */
    expect_error(rampart_service_sign_in(service, session, EMAIL, code, NULL), RAMPART_STATUS_SIGN_IN_CODE_EXPIRED,
                 "sign_in_code_expired", 401,
                 "The sign-in code has expired or was tried too often, ask for a new one");
    rampart_string_free(code);
    OK(rampart_service_session_state(service, session, &json));
    expect_text(json, want);

    /* Three orders a second apart, read back exactly as placed. */
    uint64_t first_at = now;
    char *first = place(service, session, "25");
    now += 1;
    char *second = place(service, session, "30");
    now += 1;
    char *third = place(service, session, "35.50");
    char id1[40], id2[40], id3[40];
    json_text(first, "orderId", id1, sizeof id1);
    json_text(second, "orderId", id2, sizeof id2);
    json_text(third, "orderId", id3, sizeof id3);
    snprintf(want, sizeof want,
             "{\"address\":\"" ADDRESS "\",\"amount\":\"25\",\"coin\":\"btc\",\"contactId\":\"%s\","
             "\"createdAt\":%llu,\"currency\":\"usd\",\"orderId\":\"%s\",\"price\":\"65000.00\","
             "\"quantity\":\"0.00038461\",\"status\":\"completed\",\"updatedAt\":%llu}",
             contact, (unsigned long long)first_at, id1, (unsigned long long)first_at);
    assert(strcmp(first, want) == 0);
    assert(strstr(second, "\"quantity\":\"0.00046153\"") != NULL);
    assert(strstr(third, "\"amount\":\"35.50\"") != NULL && strstr(third, "\"quantity\":\"0.00054615\"") != NULL);
    OK(rampart_service_order(service, partner, id1, &order));
    expect_text(order, first);
    OK(rampart_service_order(service, partner, id3, &order));
    expect_text(order, third);
    order = NULL;

    /* Newest first, two to a page. */
    char *page = NULL;
    OK(rampart_service_orders(service, partner, contact, NULL, 2, &page));
    snprintf(want, sizeof want, "{\"next\":\"%s\",\"orders\":[%s,%s]}", id2, third, second);
    expect_text(page, want);
    OK(rampart_service_orders(service, partner, contact, id2, 2, &page));
    snprintf(want, sizeof want, "{\"next\":null,\"orders\":[%s]}", first);
    expect_text(page, want);
    OK(rampart_service_orders(service, partner, contact, NULL, 100, &page));
    snprintf(want, sizeof want, "{\"next\":null,\"orders\":[%s,%s,%s]}", third, second, first);
    expect_text(page, want);
    OK(rampart_service_orders(service, partner, "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11", NULL, 20, &page));
    expect_text(page, "{\"next\":null,\"orders\":[]}");
    page = NULL;
    expect_invalid(rampart_service_orders(service, partner, contact, NULL, 0, &page), "limit must be 1 to 100");
    expect_invalid(rampart_service_orders(service, partner, contact, NULL, 101, &page), "limit must be 1 to 100");
    expect_invalid(rampart_service_orders(service, partner, contact, "nope", 20, &page), "orderId must be a UUID");
    /* `after` must be an order of this contact: another contact's reads as unknown. */
    expect_error(rampart_service_orders(service, partner, contact, NO_ORDER, 20, &page),
                 RAMPART_STATUS_ORDER_NOT_FOUND, "order_not_found", 404, "Order not found");
    expect_error(rampart_service_orders(service, partner, "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11", id1, 20, &page),
                 RAMPART_STATUS_ORDER_NOT_FOUND, "order_not_found", 404, "Order not found");
    expect_error(rampart_service_orders(service, partner, "", NULL, 20, &page), RAMPART_STATUS_CONTACT_ID_REQUIRED,
                 "contact_id_required", 400, "contactId is required");
    assert(page == NULL);

    /* Another partner sees none of it. */
    char *other_key = NULL;
    char *other = new_partner(service, RAMPART_ENVIRONMENT_SANDBOX, &other_key);
    expect_error(rampart_service_order(service, other, id1, &order), RAMPART_STATUS_ORDER_NOT_FOUND, "order_not_found",
                 404, "Order not found");
    expect_error(rampart_service_contact_by_email(service, other, EMAIL, &contact), RAMPART_STATUS_CONTACT_NOT_FOUND,
                 "contact_not_found", 404, "Contact not found");

    /* Orders are checked as widget options, named by the order's own fields. */
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_service_place_order(service, session, "btc", "25", NULL, "nope", NULL, &order));
    assert(starts_with(last_message(), "address is not valid: "));
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_service_place_order(service, session, "btc", "1", NULL, ADDRESS, NULL, &order));
    assert(starts_with(last_message(), "amount is not valid: "));
    assert(order == NULL);

    /* With 2FA enabled the session must pass the 2FA step before buying. */
    char *qr = NULL, *manual = NULL;
    OK(rampart_service_create_2fa(service, partner, contact, NULL, NULL, &qr, &manual, NULL));
    char *totp = code_at(manual, now);
    OK(rampart_service_enable_2fa(service, partner, contact, totp, NULL));
    rampart_string_free(totp);
    expect_error(rampart_service_place_order(service, session, "btc", "25", "usd", ADDRESS, NULL, &order),
                 RAMPART_STATUS_TWO_FACTOR_REQUIRED, "two_factor_required", 403, "2FA is required before buying");
    now += 30;
    expect_error(rampart_service_session_verify_2fa(service, session, "000000", NULL, NULL), RAMPART_STATUS_TOKEN_FAILED,
                 "token_failed", 401, "Google 2FA failed");
    expect_error(rampart_service_session_verify_2fa(service, session, NULL, NULL, NULL), RAMPART_STATUS_TOKEN_MISSING,
                 "token_missing", 401, "Google 2FA requires the token to be passed in");
    totp = code_at(manual, now);
    OK(rampart_service_session_verify_2fa(service, session, totp, NULL, &json));
    assert(strstr(json, "\"twoFactor\":\"passed\"") != NULL && strstr(json, "\"mayPurchase\":true") != NULL);
    rampart_string_free(json);
    rampart_string_free(totp);
    order = place(service, session, "25");
    rampart_string_free(order);

    /* Recovery in the session (SPEC section 8.3): the enable above issued 10 codes (discarded
     * with a NULL out_codes); regenerate shows a new set; a recovery code disables 2FA through
     * the session and starts the purchase hold, which refuses orders with its own status. */
    OK(rampart_service_session_state(service, session, &json));
    assert(strstr(json, "\"recoveryCodesRemaining\":10") != NULL && strstr(json, "\"purchaseHoldUntil\":null") != NULL);
    rampart_string_free(json);
    rampart_recovery_codes *codes = (rampart_recovery_codes *)1;
    expect_error(rampart_service_session_regenerate_recovery_codes(service, session, "000000", &codes),
                 RAMPART_STATUS_TOKEN_FAILED, "token_failed", 401, "Google 2FA failed");
    expect_invalid(rampart_service_session_regenerate_recovery_codes(service, session, "000000", NULL),
                   "out_codes must not be NULL");
    assert(codes == (rampart_recovery_codes *)1);
    now += 30;
    totp = code_at(manual, now);
    OK(rampart_service_session_regenerate_recovery_codes(service, session, totp, &codes));
    rampart_string_free(totp);
    assert(rampart_recovery_codes_count(codes) == 10);
    char recovery[32];
    snprintf(recovery, sizeof recovery, "%s", rampart_recovery_codes_at(codes, 0));
    assert(strlen(recovery) == 29);
    rampart_recovery_codes_free(codes);
    expect_error(rampart_service_session_verify_2fa(service, session, "123456", recovery, NULL),
                 RAMPART_STATUS_FACTOR_CONFLICT, "factor_conflict", 400, "Give token or recoveryCode, not both");
    OK(rampart_service_session_verify_2fa(service, session, NULL, recovery, &json));
    char hold[64], hold_json[96];
    time_t until = (time_t)(now + 86400);
    struct tm tm;
    assert(gmtime_r(&until, &tm) != NULL);
    strftime(hold, sizeof hold, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(hold_json, sizeof hold_json, "\"purchaseHoldUntil\":\"%s\"", hold);
    assert(strstr(json, "\"twoFactor\":\"none\"") != NULL && strstr(json, "\"mayPurchase\":false") != NULL);
    assert(strstr(json, hold_json) != NULL && strstr(json, "\"recoveryCodesRemaining\":0") != NULL);
    rampart_string_free(json);
    char hold_message[128];
    snprintf(hold_message, sizeof hold_message, "Purchases are on hold until %s after a 2FA reset", hold);
    expect_error(rampart_service_place_order(service, session, "btc", "25", "usd", ADDRESS, NULL, &order),
                 RAMPART_STATUS_PURCHASE_HOLD, "purchase_hold", 403, hold_message);
    expect_error(rampart_service_session_verify_2fa(service, session, NULL, recovery, NULL),
                 RAMPART_STATUS_NOT_ENABLED, "not_enabled", 409, "2FA is not enabled");
    json = NULL;

    /* Signed out, the token is dead (closing it again too); a session idle for 30 minutes too. */
    OK(rampart_service_close_session(service, session));
    json = NULL;
    expect_error(rampart_service_session_state(service, session, &json), RAMPART_STATUS_SESSION_EXPIRED,
                 "session_expired", 401, "Widget session expired, sign in again");
    expect_error(rampart_service_close_session(service, session), RAMPART_STATUS_SESSION_EXPIRED, "session_expired",
                 401, "Widget session expired, sign in again");
    char *idle = NULL;
    OK(rampart_service_open_session(service, key, NULL, &idle, NULL));
    now += 1800;
    expect_error(rampart_service_request_sign_in_code(service, idle, EMAIL, &code, NULL),
                 RAMPART_STATUS_SESSION_EXPIRED, "session_expired", 401, "Widget session expired, sign in again");
    assert(json == NULL);

    char *strings[] = {key, partner, contact, session, first, second, third, other_key, other, qr, manual, idle};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(service);
}

static void test_sign_in_throttle(void) {
    rampart_service *service = open_manual();
    char *key = NULL;
    char *partner = new_partner(service, RAMPART_ENVIRONMENT_SANDBOX, &key);
    char *session = NULL, *code = NULL;
    OK(rampart_service_open_session(service, key, NULL, &session, NULL));
    for (int i = 0; i < 3; i++) {
        OK(rampart_service_request_sign_in_code(service, session, EMAIL, &code, NULL));
        rampart_string_free(code);
        code = NULL;
    }
    now += 100;
    expect_error(rampart_service_request_sign_in_code(service, session, EMAIL, &code, NULL),
                 RAMPART_STATUS_SIGN_IN_THROTTLED, "sign_in_throttled", 429,
                 "Too many sign-in codes for this email, try again in 500 seconds");
    assert(rampart_last_retry_after() == 500 && code == NULL);
    /* Another email is not throttled; success clears the last error. */
    OK(rampart_service_request_sign_in_code(service, session, "bob@example.com", &code, NULL));
    assert(rampart_last_retry_after() == 0);
    rampart_string_free(code);
    now += 500;
    OK(rampart_service_request_sign_in_code(service, session, EMAIL, &code, NULL));
    rampart_string_free(code);
    rampart_string_free(session);
    rampart_string_free(partner);
    rampart_string_free(key);
    rampart_service_free(service);
}

static void test_production(void) {
    rampart_config config = manual_config();
    uint8_t master_key[32] = {7};
    config.environment = RAMPART_ENVIRONMENT_PRODUCTION;
    config.master_key = master_key;
    config.master_key_len = sizeof master_key;
    rampart_service *service = NULL;
    OK(rampart_service_open_memory(&config, &service));
    char *key = NULL;
    char *partner = new_partner(service, RAMPART_ENVIRONMENT_PRODUCTION, &key);
    char *session = NULL, *order = NULL;
    expect_error(rampart_service_open_session(service, key, NULL, &session, NULL), RAMPART_STATUS_WIDGET_NOT_APPROVED,
                 "widget_not_approved", 403, "This widget is not approved for production yet.");
    OK(rampart_service_set_widget_approval(service, "ops@example.com", partner, true));
    rampart_string_free(session);
    session = signed_in(service, key, EMAIL);
    expect_error(rampart_service_place_order(service, session, "btc", "25", "usd", ADDRESS, NULL, &order),
                 RAMPART_STATUS_PURCHASES_UNAVAILABLE, "purchases_unavailable", 503,
                 "Purchases are unavailable on this server");
    assert(order == NULL);
    char *contact = NULL, *page = NULL;
    OK(rampart_service_contact_by_email(service, partner, EMAIL, &contact));
    OK(rampart_service_orders(service, partner, contact, NULL, 20, &page));
    expect_text(page, "{\"next\":null,\"orders\":[]}");
    char *strings[] = {key, partner, session, contact};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(service);
}

static void test_arguments(void) {
    rampart_service *service = open_manual();
    char *key = NULL;
    char *partner = new_partner(service, RAMPART_ENVIRONMENT_SANDBOX, &key);
    char *session = signed_in(service, key, EMAIL);
    char *out = NULL, *contact = NULL;
    char *order = place(service, session, "25");
    char id[40];
    json_text(order, "orderId", id, sizeof id);
    OK(rampart_service_contact_by_email(service, partner, EMAIL, &contact));

    /* NULL arguments name themselves; nothing is written. */
    expect_invalid(rampart_service_open_session(NULL, key, NULL, &out, NULL), "service must not be NULL");
    expect_invalid(rampart_service_open_session(service, NULL, NULL, &out, NULL), "publishable_key must not be NULL");
    expect_invalid(rampart_service_open_session(service, key, NULL, NULL, NULL), "out_session_token must not be NULL");
    expect_invalid(rampart_service_session_state(service, NULL, &out), "session_token must not be NULL");
    expect_invalid(rampart_service_session_state(service, session, NULL), "out_session_json must not be NULL");
    expect_invalid(rampart_service_close_session(service, NULL), "session_token must not be NULL");
    expect_invalid(rampart_service_request_sign_in_code(service, session, NULL, &out, NULL), "email must not be NULL");
    expect_invalid(rampart_service_request_sign_in_code(service, session, EMAIL, NULL, NULL), "out_code must not be NULL");
    expect_invalid(rampart_service_sign_in(service, session, EMAIL, NULL, NULL), "code must not be NULL");
    expect_invalid(rampart_service_place_order(service, session, NULL, "25", NULL, ADDRESS, NULL, &out),
                   "coin must not be NULL");
    expect_invalid(rampart_service_place_order(service, session, "btc", NULL, NULL, ADDRESS, NULL, &out),
                   "amount must not be NULL");
    expect_invalid(rampart_service_place_order(service, session, "btc", "25", NULL, NULL, NULL, &out),
                   "address must not be NULL");
    expect_invalid(rampart_service_place_order(service, session, "btc", "25", NULL, ADDRESS, NULL, NULL),
                   "out_order_json must not be NULL");
    expect_invalid(rampart_service_order(service, partner, NULL, &out), "order_id must not be NULL");
    expect_invalid(rampart_service_order(service, NULL, id, &out), "partner_id must not be NULL");
    expect_invalid(rampart_service_order(service, partner, id, NULL), "out_order_json must not be NULL");
    expect_invalid(rampart_service_orders(service, partner, contact, NULL, 20, NULL), "out_page_json must not be NULL");
    expect_error(rampart_service_orders(service, partner, NULL, NULL, 20, &out), RAMPART_STATUS_CONTACT_ID_REQUIRED,
                 "contact_id_required", 400, "contactId is required");
    expect_invalid(rampart_service_contact_by_email(service, partner, NULL, &out), "email must not be NULL");
    expect_invalid(rampart_service_contact_by_email(service, partner, EMAIL, NULL), "out_contact_id must not be NULL");
    assert(out == NULL);

    /* Text that is not UTF-8: the field's own 400, or for credentials the wrong one's answer. */
    expect_error(rampart_service_open_session(service, "pk_\xff", NULL, &out, NULL), RAMPART_STATUS_PARTNER_NOT_FOUND,
                 "partner_not_found", 404, "Partner not found");
    expect_invalid(rampart_service_open_session(service, key, "https://\xff", &out, NULL),
                   "origin must be valid Unicode text");
    expect_error(rampart_service_session_state(service, "ws_\xff", &out), RAMPART_STATUS_SESSION_EXPIRED,
                 "session_expired", 401, "Widget session expired, sign in again");
    expect_error(rampart_service_close_session(service, "ws_\xff"), RAMPART_STATUS_SESSION_EXPIRED, "session_expired",
                 401, "Widget session expired, sign in again");
    expect_invalid(rampart_service_request_sign_in_code(service, session, "\xff@example.com", &out, NULL),
                   "email must be valid Unicode text");
    expect_invalid(rampart_service_place_order(service, session, "btc", "25", "\xff", ADDRESS, NULL, &out),
                   "currency must be valid Unicode text");
    expect_invalid(rampart_service_order(service, partner, "\xff", &out), "order_id must be valid Unicode text");
    expect_invalid(rampart_service_orders(service, partner, contact, "\xff", 20, &out),
                   "after must be valid Unicode text");
    expect_error(rampart_service_orders(service, partner, "\xff", NULL, 20, &out), RAMPART_STATUS_CONTACT_ID_INVALID,
                 "contact_id_invalid", 400, "contactId must be a UUID");
    expect_invalid(rampart_service_contact_by_email(service, partner, "\xff", &out), "email must be valid Unicode text");
    assert(out == NULL);

    /* A widget configuration of the caller's: a coin it does not list is refused. */
    rampart_widget_config *config = NULL;
    OK(rampart_widget_config_from_json("{\"coins\":[{\"symbol\":\"eth\",\"chain\":\"ethereum\",\"name\":\"Ether\"}]}",
                                       &config));
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_service_place_order(service, session, "btc", "25", NULL, ADDRESS, config, &out));
    assert(strstr(last_message(), "is not valid: The coin symbol is not supported.") != NULL);
    rampart_widget_config_free(config);
    assert(out == NULL);

    /* Storage failures are 500s with the cause kept for logs. */
    rampart_config faulty_config = manual_config();
    rampart_service *faulty = NULL;
    OK(rampart_service_open_faulty(&faulty_config, &faulty));
    char *faulty_key = NULL;
    char *faulty_partner = new_partner(faulty, RAMPART_ENVIRONMENT_SANDBOX, &faulty_key);
    OK(rampart_service_set_faults(faulty, true, false, true));
    expect_error(rampart_service_order(faulty, faulty_partner, id, &out), RAMPART_STATUS_INTERNAL, "internal", 500,
                 "Internal server error");
    char cause[256];
    assert(rampart_last_error_cause(cause, sizeof cause) > 0 && strstr(cause, "injected") != NULL);
    expect_error(rampart_service_contact_by_email(faulty, faulty_partner, EMAIL, &out), RAMPART_STATUS_INTERNAL,
                 "internal", 500, "Internal server error");
    assert(out == NULL);

    char *strings[] = {key, partner, session, contact, order, faulty_key, faulty_partner};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(faulty);
    rampart_service_free(service);
}

/* Orders and contacts are kept in the database: a new handle reads them back. */
static void test_sqlite(const char *dir) {
    char path[512], key_path[520];
    snprintf(path, sizeof path, "%s/checkout.db", dir);
    snprintf(key_path, sizeof key_path, "%s.key", path);
    remove(path);
    remove(key_path);
    rampart_config config = manual_config();
    rampart_service *service = NULL;
    OK(rampart_service_open(path, &config, &service));
    char *key = NULL;
    char *partner = new_partner(service, RAMPART_ENVIRONMENT_SANDBOX, &key);
    char *session = signed_in(service, key, EMAIL);
    char *placed = place(service, session, "25");
    char id[40];
    json_text(placed, "orderId", id, sizeof id);
    rampart_service_free(service);

    service = NULL;
    OK(rampart_service_open(path, &config, &service));
    char *order = NULL, *contact = NULL, *page = NULL;
    OK(rampart_service_order(service, partner, id, &order));
    assert(strcmp(order, placed) == 0);
    OK(rampart_service_contact_by_email(service, partner, EMAIL, &contact));
    OK(rampart_service_orders(service, partner, contact, NULL, 1, &page));
    char want[1024];
    snprintf(want, sizeof want, "{\"next\":null,\"orders\":[%s]}", placed);
    expect_text(page, want);
    /* The session is kept too. */
    OK(rampart_service_close_session(service, session));
    char *strings[] = {key, partner, session, placed, order, contact};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(service);
    remove(path);
    remove(key_path);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    test_sign_in_and_orders();
    test_sign_in_throttle();
    test_production();
    test_arguments();
    test_sqlite(dir);
    printf("test_checkout: all checks passed\n");
    return 0;
}
