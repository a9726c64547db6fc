/* The shared vectors (tests/vectors/: RFC 4226, RFC 6238, the token grammar, Standard Webhooks
 * signatures) and the status taxonomy, through the C ABI. The file is the tab-separated form printed by
 * `cargo run -p rampart-ffi --example c_vectors` (see that file for the line format), so this
 * program needs no JSON parser. */
#include "test_util.h"

#define MAX_FIELDS 9

/* Split `line` in place at tabs; returns the number of fields. */
static int split(char *line, char **fields) {
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < MAX_FIELDS;) {
        fields[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

static uint64_t number(const char *s) {
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    assert(end != s && *end == '\0');
    return (uint64_t)v;
}

/* Decode hex into `out` (NUL-terminated); returns the byte length. */
static size_t unhex(const char *hex, char *out, size_t cap) {
    size_t n = strlen(hex) / 2;
    assert(n < cap);
    for (size_t i = 0; i < n; i++) {
        unsigned int byte = 0;
        assert(sscanf(hex + 2 * i, "%2x", &byte) == 1);
        out[i] = (char)byte;
    }
    out[n] = '\0';
    return n;
}

static int hotp_cases, totp_cases, token_cases, tokens_not_applicable, status_cases, webhook_sign_cases,
    webhook_verify_cases;

static void check_hotp(char **f) {
    char *code = NULL;
    OK(rampart_totp_hotp(f[1], number(f[2]), &code));
    assert(strcmp(code, f[3]) == 0);
    rampart_string_free(code);
    hotp_cases++;
}

static void check_totp(char **f) {
    uint64_t t = number(f[2]), step = number(f[3]);
    char *code = code_at(f[1], t);
    assert(strcmp(code, f[4]) == 0);
    rampart_string_free(code);
    bool accepted = false;
    uint64_t matched = 0;
    OK(rampart_totp_verify(f[1], f[4], t, 0, &accepted, &matched));
    assert(accepted && matched == step);
    /* one step later it verifies only with a window */
    OK(rampart_totp_verify(f[1], f[4], t + 30, 0, &accepted, &matched));
    assert(!accepted && matched == 0);
    OK(rampart_totp_verify(f[1], f[4], t + 30, 1, &accepted, &matched));
    assert(accepted && matched == step);
    /* the same through a secret handle decoded once */
    rampart_totp_secret *secret = NULL;
    OK(rampart_totp_secret_from_base32(f[1], &secret));
    OK(rampart_totp_verify_secret(secret, f[4], t, 0, &accepted, &matched));
    assert(accepted && matched == step);
    OK(rampart_totp_verify_secret(secret, f[4], t + 30, 0, &accepted, &matched));
    assert(!accepted && matched == 0);
    OK(rampart_totp_verify_secret(secret, f[4], t + 30, 1, &accepted, &matched));
    assert(accepted && matched == step);
    rampart_totp_secret_free(secret);
    totp_cases++;
}

static void check_token(char **f) {
    char input[256];
    const char *token = input;
    size_t len = 0;
    if (strcmp(f[1], "NULL") == 0) {
        token = NULL;
    } else {
        len = unhex(f[1], input, sizeof input);
    }
    if (token && strlen(input) != len) {
        /* A C string ends at its first NUL, so "123456\0" reaches the library as "123456":
         * these cases cannot be expressed through a NUL-terminated API. */
        tokens_not_applicable++;
        return;
    }
    rampart_token_kind kind = 99;
    char *code = NULL;
    OK(rampart_token_parse(token, &kind, &code));
    const char *expect = f[2];
    if (strcmp(expect, "code") == 0) {
        if (kind != RAMPART_TOKEN_CODE || strcmp(code, f[3]) != 0) {
            fprintf(stderr, "token case '%s': want code %s\n", f[4], f[3]);
        }
        assert(kind == RAMPART_TOKEN_CODE && strcmp(code, f[3]) == 0);
    } else {
        rampart_token_kind want = strcmp(expect, "missing") == 0 ? RAMPART_TOKEN_MISSING : RAMPART_TOKEN_MALFORMED;
        assert(strcmp(expect, "missing") == 0 || strcmp(expect, "malformed") == 0);
        if (kind != want) fprintf(stderr, "token case '%s': want %s\n", f[4], expect);
        assert(kind == want && code == NULL);
    }
    rampart_string_free(code);
    token_cases++;
}

/* "webhook-sign NAME SECRET ID TIMESTAMP BODY_HEX SIGNATURE": exactly that signature. */
static void check_webhook_sign(char **f) {
    char body[4096];
    size_t len = unhex(f[5], body, sizeof body);
    char *signature = NULL;
    OK(rampart_webhook_sign(f[2], f[3], number(f[4]), (const uint8_t *)body, len, &signature));
    if (strcmp(signature, f[6]) != 0) fprintf(stderr, "webhook sign case '%s': got %s\n", f[1], signature);
    assert(strcmp(signature, f[6]) == 0);
    rampart_string_free(signature);
    webhook_sign_cases++;
}

/* "webhook-verify NAME SECRET ID TIMESTAMP_HEX SIGNATURE BODY_HEX NOW RESULT": that outcome,
 * named as the vectors name it. */
static void check_webhook_verify(char **f) {
    char timestamp[256], body[4096];
    unhex(f[4], timestamp, sizeof timestamp);
    size_t len = unhex(f[6], body, sizeof body);
    rampart_webhook_verify_result result = RAMPART_WEBHOOK_MISSING_HEADER;
    OK(rampart_webhook_verify(f[2], f[3], timestamp, f[5], (const uint8_t *)body, len, number(f[7]), &result));
    const char *name = rampart_webhook_verify_result_name((uint32_t)result);
    if (strcmp(name, f[8]) != 0) fprintf(stderr, "webhook verify case '%s': want %s, got %s\n", f[1], f[8], name);
    assert(strcmp(name, f[8]) == 0);
    assert((result == RAMPART_WEBHOOK_VALID) == (strcmp(f[8], "valid") == 0));
    webhook_verify_cases++;
}

/* The runner's own webhook cases: absent headers, an empty body, misuse. */
static void check_webhook_edges(void) {
    const char *secret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    char *signature = NULL;
    /* an empty body may be NULL; a message verifies up to the edge of the tolerance */
    OK(rampart_webhook_sign(secret, "msg_1", 1700000000, NULL, 0, &signature));
    assert(starts_with(signature, "v1,") && strlen(signature) == 47);
    rampart_webhook_verify_result result = RAMPART_WEBHOOK_NO_MATCH;
    OK(rampart_webhook_verify(secret, "msg_1", "1700000000", signature, NULL, 0,
                              1700000000 + RAMPART_WEBHOOK_TOLERANCE_SECS, &result));
    assert(result == RAMPART_WEBHOOK_VALID);
    OK(rampart_webhook_verify(secret, "msg_1", "1700000000", signature, (const uint8_t *)"x", 1, 1700000000, &result));
    assert(result == RAMPART_WEBHOOK_NO_MATCH);
    /* the secret without its prefix reads the same */
    OK(rampart_webhook_verify(secret + 6, "msg_1", "1700000000", signature, NULL, 0, 1700000000, &result));
    assert(result == RAMPART_WEBHOOK_VALID);
    /* a NULL header is an absent one: an outcome, not an error */
    OK(rampart_webhook_verify(secret, NULL, "1700000000", signature, NULL, 0, 1700000000, &result));
    assert(result == RAMPART_WEBHOOK_MISSING_HEADER);
    OK(rampart_webhook_verify(secret, "msg_1", NULL, signature, NULL, 0, 1700000000, &result));
    assert(result == RAMPART_WEBHOOK_MISSING_HEADER);
    OK(rampart_webhook_verify(secret, "msg_1", "1700000000", NULL, NULL, 0, 1700000000, &result));
    assert(result == RAMPART_WEBHOOK_MISSING_HEADER);
    assert(strcmp(rampart_webhook_verify_result_name(RAMPART_WEBHOOK_MISSING_HEADER), "missing_header") == 0);
    assert(strcmp(rampart_webhook_verify_result_name(99), "unknown") == 0);
    /* misuse is a status, and the out-pointer is left alone */
    char *untouched = NULL;
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_webhook_sign("whsec_not base64!", "msg_1", 1, NULL, 0, &untouched));
    assert(untouched == NULL && strcmp(last_message(), "secret must be whsec_ followed by base64") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_webhook_sign(secret, NULL, 1, NULL, 0, &untouched));
    assert(untouched == NULL && strcmp(last_message(), "msg_id must not be NULL") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_webhook_sign(secret, "msg_1", 1, NULL, 5, &untouched));
    assert(untouched == NULL && strcmp(last_message(), "body must not be NULL") == 0);
    result = RAMPART_WEBHOOK_TOO_NEW;
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_webhook_verify(NULL, "msg_1", "1700000000", signature, NULL, 0, 1700000000, &result));
    assert(result == RAMPART_WEBHOOK_TOO_NEW && strcmp(last_message(), "secret must not be NULL") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_webhook_verify("whsec_", "msg_1", "1700000000", signature, NULL, 0, 1700000000, &result));
    assert(result == RAMPART_WEBHOOK_TOO_NEW && strcmp(last_message(), "secret must be whsec_ followed by base64") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_webhook_verify(secret, "msg_1", "1700000000", signature, NULL, 0, 1700000000, NULL));
    rampart_string_free(signature);
}

/* Every status constant of the header, by name: a constant renamed or renumbered in the
 * header fails here at compile time or in the comparison below. */
static const struct {
    rampart_status status;
    const char *name;
} HEADER_STATUSES[] = {
    {RAMPART_STATUS_UNAUTHORIZED, "unauthorized"},
    {RAMPART_STATUS_PAYLOAD_TOO_LARGE, "payload_too_large"},
    {RAMPART_STATUS_INVALID_INPUT, "invalid_input"},
    {RAMPART_STATUS_CONTACT_ID_REQUIRED, "contact_id_required"},
    {RAMPART_STATUS_CONTACT_ID_INVALID, "contact_id_invalid"},
    {RAMPART_STATUS_ISSUER_INVALID, "issuer_invalid"},
    {RAMPART_STATUS_WIDGET_TEXT_INVALID, "widget_text_invalid"},
    {RAMPART_STATUS_WIDGET_BUTTON_URL_INVALID, "widget_button_url_invalid"},
    {RAMPART_STATUS_MUST_DISABLE_FIRST, "must_disable_first"},
    {RAMPART_STATUS_ALREADY_ENABLED, "already_enabled"},
    {RAMPART_STATUS_NOT_CREATED, "not_created"},
    {RAMPART_STATUS_NOT_ENABLED, "not_enabled"},
    {RAMPART_STATUS_LOCKED, "locked"},
    {RAMPART_STATUS_THROTTLED, "throttled"},
    {RAMPART_STATUS_TOKEN_MISSING, "token_missing"},
    {RAMPART_STATUS_TOKEN_FAILED, "token_failed"},
    {RAMPART_STATUS_NOT_FOUND, "not_found"},
    {RAMPART_STATUS_METHOD_NOT_ALLOWED, "method_not_allowed"},
    {RAMPART_STATUS_PARTNER_NOT_FOUND, "partner_not_found"},
    {RAMPART_STATUS_CREATE_FAILED, "create_failed"},
    {RAMPART_STATUS_ENABLE_FAILED, "enable_failed"},
    {RAMPART_STATUS_DISABLE_FAILED, "disable_failed"},
    {RAMPART_STATUS_STATUS_FAILED, "status_failed"},
    {RAMPART_STATUS_VERIFY_FAILED, "verify_failed"},
    {RAMPART_STATUS_INTERNAL, "internal"},
    {RAMPART_STATUS_CONFIG, "config"},
    {RAMPART_STATUS_SESSION_EXPIRED, "session_expired"},
    {RAMPART_STATUS_SIGN_IN_REQUIRED, "sign_in_required"},
    {RAMPART_STATUS_SIGN_IN_CODE_FAILED, "sign_in_code_failed"},
    {RAMPART_STATUS_SIGN_IN_CODE_EXPIRED, "sign_in_code_expired"},
    {RAMPART_STATUS_SIGN_IN_THROTTLED, "sign_in_throttled"},
    {RAMPART_STATUS_TWO_FACTOR_REQUIRED, "two_factor_required"},
    {RAMPART_STATUS_PURCHASES_UNAVAILABLE, "purchases_unavailable"},
    {RAMPART_STATUS_ORDER_NOT_FOUND, "order_not_found"},
    {RAMPART_STATUS_CONTACT_NOT_FOUND, "contact_not_found"},
    {RAMPART_STATUS_SANDBOX_ONLY, "sandbox_only"},
    {RAMPART_STATUS_WIDGET_NOT_APPROVED, "widget_not_approved"},
    {RAMPART_STATUS_ORIGIN_NOT_ALLOWED, "origin_not_allowed"},
    {RAMPART_STATUS_SIGN_IN_UNAVAILABLE, "sign_in_unavailable"},
    {RAMPART_STATUS_FACTOR_CONFLICT, "factor_conflict"},
    {RAMPART_STATUS_PURCHASE_HOLD, "purchase_hold"},
    {RAMPART_STATUS_WEBHOOK_ENDPOINT_NOT_FOUND, "webhook_endpoint_not_found"},
    {RAMPART_STATUS_WEBHOOK_MESSAGE_NOT_FOUND, "webhook_message_not_found"},
    {RAMPART_STATUS_TOO_MANY_WEBHOOK_ENDPOINTS, "too_many_webhook_endpoints"},
    {RAMPART_STATUS_INVITATION_NOT_FOUND, "invitation_not_found"},
    {RAMPART_STATUS_INVITATION_EXPIRED, "invitation_expired"},
    {RAMPART_STATUS_SIGN_IN_FAILED, "sign_in_failed"},
    {RAMPART_STATUS_DASHBOARD_SESSION_REQUIRED, "dashboard_session_required"},
    {RAMPART_STATUS_ROLE_FORBIDDEN, "role_forbidden"},
    {RAMPART_STATUS_LAST_OWNER, "last_owner"},
    {RAMPART_STATUS_MEMBER_EXISTS, "member_exists"},
    {RAMPART_STATUS_MEMBER_NOT_FOUND, "member_not_found"},
    {RAMPART_STATUS_CSRF_FAILED, "csrf_failed"},
};
#define HEADER_STATUS_COUNT (sizeof HEADER_STATUSES / sizeof HEADER_STATUSES[0])

/* "status NUMBER CODE NAME MESSAGE": the core's kind, as the Rust side sees it. */
static void check_status(char **f) {
    uint32_t n = (uint32_t)number(f[1]);
    assert(rampart_status_code(n) == number(f[2]));
    assert(strcmp(rampart_status_name(n), f[3]) == 0);
    assert(strcmp(rampart_status_message(n), f[4]) == 0);
    int found = 0;
    for (size_t i = 0; i < HEADER_STATUS_COUNT; i++) {
        if (strcmp(HEADER_STATUSES[i].name, f[3]) == 0) {
            assert((uint32_t)HEADER_STATUSES[i].status == n);
            found = 1;
        }
    }
    if (!found) fprintf(stderr, "status %s (%s) has no constant in this test's table\n", f[1], f[3]);
    assert(found);
    status_cases++;
}

int main(int argc, char **argv) {
    assert(argc == 2);
    FILE *in = fopen(argv[1], "r");
    assert(in != NULL);
    char line[4096];
    while (fgets(line, sizeof line, in)) {
        char *f[MAX_FIELDS] = {0};
        int n = split(line, f);
        if (strcmp(f[0], "hotp") == 0 && n == 4) {
            check_hotp(f);
        } else if (strcmp(f[0], "totp") == 0 && n == 5) {
            check_totp(f);
        } else if (strcmp(f[0], "token") == 0 && n == 5) {
            check_token(f);
        } else if (strcmp(f[0], "json-only") == 0) {
            tokens_not_applicable++; /* a JSON token that is not a string: C callers pass strings */
        } else if (strcmp(f[0], "status") == 0 && n == 5) {
            check_status(f);
        } else if (strcmp(f[0], "webhook-sign") == 0 && n == 7) {
            check_webhook_sign(f);
        } else if (strcmp(f[0], "webhook-verify") == 0 && n == 9) {
            check_webhook_verify(f);
        } else {
            fprintf(stderr, "unreadable vector line: %s\n", f[0]);
            assert(0);
        }
    }
    fclose(in);

    /* the runner's own cases: a 1 MiB string, and an absent token (NULL) */
    size_t big = 1u << 20;
    char *huge = malloc(big + 1);
    assert(huge);
    memset(huge, '1', big);
    huge[big] = '\0';
    rampart_token_kind kind = RAMPART_TOKEN_CODE;
    OK(rampart_token_parse(huge, &kind, NULL));
    assert(kind == RAMPART_TOKEN_MALFORMED);
    free(huge);
    OK(rampart_token_parse(NULL, &kind, NULL));
    assert(kind == RAMPART_TOKEN_MISSING);

    /* OK, PANIC and numbers that are not a status */
    assert(rampart_status_code(RAMPART_OK) == 200 && strcmp(rampart_status_name(RAMPART_OK), "ok") == 0);
    assert(strcmp(rampart_status_message(RAMPART_OK), "OK") == 0);
    assert(rampart_status_code(RAMPART_STATUS_PANIC) == 500);
    assert(strcmp(rampart_status_name(RAMPART_STATUS_PANIC), "panic") == 0);
    assert(strcmp(rampart_status_message(RAMPART_STATUS_PANIC), "Internal server error") == 0);
    assert(rampart_status_code(254) == 500 && strcmp(rampart_status_name(254), "unknown") == 0);
    assert(strcmp(rampart_status_message(4000000000u), "Unknown status") == 0);

    check_webhook_edges();

    assert(strlen(rampart_version()) >= 5 && strchr(rampart_version(), '.') != NULL);

    assert(hotp_cases == 10 && totp_cases == 6 && token_cases > 20);
    assert(status_cases == (int)HEADER_STATUS_COUNT);
    assert(webhook_sign_cases >= 3 && webhook_verify_cases >= 11);
    printf("test_vectors: %d hotp, %d totp, %d token cases, %d statuses, %d webhook sign and %d webhook verify cases passed (%d token cases need JSON or an embedded NUL, which a C string API cannot carry)\n",
           hotp_cases, totp_cases, token_cases, status_cases, webhook_sign_cases, webhook_verify_cases,
           tokens_not_applicable);
    return 0;
}
