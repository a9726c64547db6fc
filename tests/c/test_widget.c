/* The widget and address functions of the C ABI: the shared vectors (tests/vectors/widget and
 * tests/vectors/addresses, converted to lines by `c_vectors widget`: see that file for the
 * format), then NULL and non-UTF-8 arguments, _free(NULL), a hostile clientName, and text that
 * is not valid Unicode inside JSON (named by its option path, as the other languages name a lone
 * surrogate).
 *
 *   test_widget WIDGET_VECTORS.txt */
#include "test_util.h"

#define MAX_FIELDS 16
#define MAX_ISSUES 64

static const char NOT_CHECKED[] = "*";

/* The last error code of this thread, in a static buffer. */
static const char *last_code(void) {
    static char buf[128];
    size_t n = rampart_last_error_code(buf, sizeof buf);
    assert(n < sizeof buf);
    return buf;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    assert(!"bad hex digit");
    return 0;
}

/* A text field: NULL for "-", NOT_CHECKED for "*", else a malloc'd decoded string. */
static char *text(const char *field) {
    if (strcmp(field, "-") == 0) return NULL;
    if (strcmp(field, "*") == 0) return (char *)NOT_CHECKED;
    assert(field[0] == 'x');
    size_t n = strlen(field + 1) / 2;
    char *out = malloc(n + 1);
    assert(out != NULL);
    for (size_t i = 0; i < n; i++) out[i] = (char)(hex_digit(field[1 + 2 * i]) * 16 + hex_digit(field[2 + 2 * i]));
    out[n] = '\0';
    return out;
}

static void release(char *s) {
    if (s != NULL && s != NOT_CHECKED) free(s);
}

/* Split a line at tabs in place, keeping empty fields; returns the number of fields. */
static int split(char *line, char **fields) {
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    fields[n++] = line;
    for (char *p = line; *p != '\0'; p++) {
        if (*p == '\t') {
            *p = '\0';
            assert(n < MAX_FIELDS);
            fields[n++] = p + 1;
        }
    }
    return n;
}

static uint32_t target_of(const char *s) {
    if (strcmp(s, "script") == 0) return RAMPART_WIDGET_TARGET_SCRIPT;
    assert(strcmp(s, "url") == 0);
    return RAMPART_WIDGET_TARGET_URL;
}

static uint32_t env_of(const char *s) {
    if (strcmp(s, "sandbox") == 0) return RAMPART_ENVIRONMENT_SANDBOX;
    if (strcmp(s, "production") == 0) return RAMPART_ENVIRONMENT_PRODUCTION;
    assert(strcmp(s, "-") == 0);
    return RAMPART_WIDGET_NO_ENVIRONMENT;
}

/* NULL for the default configuration. */
static rampart_widget_config *config_of(const char *field) {
    char *json = text(field);
    if (json == NULL) return NULL;
    rampart_widget_config *config = NULL;
    OK(rampart_widget_config_from_json(json, &config));
    release(json);
    return config;
}

static rampart_widget_validation *validate(rampart_widget_config *config, const char *options_field, uint32_t target,
                                           uint32_t env) {
    char *options = text(options_field);
    assert(options != NULL && options != NOT_CHECKED);
    rampart_widget_validation *v = NULL;
    OK(rampart_widget_validate(config, options, target, env, &v));
    release(options);
    return v;
}

typedef struct {
    char severity[16];
    char code[96];
    char *path, *value, *suggestion;
} expected_issue;

static int read_issues(FILE *f, int count, expected_issue *out) {
    char line[8192];
    char *fields[MAX_FIELDS];
    assert(count <= MAX_ISSUES);
    for (int i = 0; i < count; i++) {
        assert(fgets(line, sizeof line, f) != NULL);
        assert(split(line, fields) == 6 && strcmp(fields[0], "issue") == 0);
        snprintf(out[i].severity, sizeof out[i].severity, "%s", fields[1]);
        snprintf(out[i].code, sizeof out[i].code, "%s", fields[2]);
        out[i].path = text(fields[3]);
        out[i].value = text(fields[4]);
        out[i].suggestion = text(fields[5]);
    }
    return count;
}

static void free_issues(expected_issue *issues, int count) {
    for (int i = 0; i < count; i++) {
        release(issues[i].path);
        release(issues[i].value);
        release(issues[i].suggestion);
    }
}

static void expect_optional(const char *name, const char *want, const char *got) {
    if (want == NOT_CHECKED) return;
    if (want == NULL ? got != NULL : (got == NULL || strcmp(want, got) != 0)) {
        fprintf(stderr, "  %s: want %s, got %s\n", name, want ? want : "(absent)", got ? got : "(absent)");
        assert(!"issue mismatch");
    }
}

/* The validation's errors (or warnings) are exactly the expected ones of `severity`, in order. */
static void check_issues(const rampart_widget_validation *v, const char *severity, const expected_issue *issues,
                         int count, const char *name) {
    int want = 0;
    for (int i = 0; i < count; i++) want += strcmp(issues[i].severity, severity) == 0;
    int errors = strcmp(severity, "error") == 0;
    size_t have = errors ? rampart_widget_validation_error_count(v) : rampart_widget_validation_warning_count(v);
    if (have != (size_t)want) {
        char *json = NULL;
        OK(rampart_widget_validation_to_json(v, &json));
        fprintf(stderr, "%s: want %d %ss, got %zu: %s\n", name, want, severity, have, json);
        rampart_string_free(json);
    }
    assert(have == (size_t)want);
    size_t k = 0;
    for (int i = 0; i < count; i++) {
        if (strcmp(issues[i].severity, severity) != 0) continue;
        const char *code = NULL, *path = NULL, *message = NULL, *value = NULL, *suggestion = NULL;
        if (errors)
            OK(rampart_widget_validation_error_at(v, k, &code, &path, &message, &value, &suggestion));
        else
            OK(rampart_widget_validation_warning_at(v, k, &code, &path, &message, &value, &suggestion));
        if (strcmp(code, issues[i].code) != 0 || strcmp(path, issues[i].path) != 0) {
            fprintf(stderr, "%s: %s %zu: want %s at '%s', got %s at '%s'\n", name, severity, k, issues[i].code,
                    issues[i].path, code, path);
            assert(!"issue mismatch");
        }
        assert(message != NULL && message[0] != '\0');
        expect_optional("value", issues[i].value, value);
        expect_optional("suggestion", issues[i].suggestion, suggestion);
        k++;
    }
}

static void expect_text(const char *name, const char *what, const char *want, const char *got) {
    if (strcmp(want, got) != 0) {
        fprintf(stderr, "%s: %s\n  want %s\n  got  %s\n", name, what, want, got);
        assert(!"text mismatch");
    }
}

/* A parsed-URL JSON is {"environment":E,"options":O,"warnings":[...]}: check E and O exactly,
 * then the warnings' codes and paths in order. */
static void check_parsed(const char *json, const char *env, const char *options_field, const expected_issue *issues,
                         int count, const char *name) {
    char *options = text(options_field);
    size_t need = strlen(env) + strlen(options) + 64;
    char *prefix = malloc(need);
    assert(prefix != NULL);
    snprintf(prefix, need, "{\"environment\":\"%s\",\"options\":%s,\"warnings\":[", env, options);
    if (!starts_with(json, prefix)) fprintf(stderr, "%s:\n  want %s...\n  got  %s\n", name, prefix, json);
    assert(starts_with(json, prefix));
    const char *p = json + strlen(prefix);
    int seen = 0;
    for (const char *q = p; (q = strstr(q, "{\"code\":\"")) != NULL; q++) seen++;
    int want = 0;
    for (int i = 0; i < count; i++) {
        if (strcmp(issues[i].severity, "parse") != 0) continue;
        want++;
        char needle[256];
        snprintf(needle, sizeof needle, "{\"code\":\"%s\"", issues[i].code);
        p = strstr(p, needle);
        assert(p != NULL);
        snprintf(needle, sizeof needle, "\"path\":\"%s\"", issues[i].path);
        const char *next = strstr(p + 1, "{\"code\":\"");
        const char *path = strstr(p, needle);
        assert(path != NULL && (next == NULL || path < next));
        p++;
    }
    if (seen != want) fprintf(stderr, "%s: want %d parse warnings: %s\n", name, want, json);
    assert(seen == want);
    free(prefix);
    release(options);
}

static int run_validate(FILE *f, char **fl, int n) {
    assert(n == 10);
    char *name = text(fl[1]);
    rampart_widget_config *config = config_of(fl[2]);
    int nerr = atoi(fl[8]), nwarn = strcmp(fl[9], "*") == 0 ? 0 : atoi(fl[9]);
    expected_issue issues[MAX_ISSUES];
    int count = read_issues(f, nerr + nwarn, issues);
    rampart_widget_validation *v = validate(config, fl[5], target_of(fl[3]), env_of(fl[4]));
    check_issues(v, "error", issues, count, name);
    if (strcmp(fl[9], "*") != 0) check_issues(v, "warning", issues, count, name);
    assert(rampart_widget_validation_is_valid(v) == (nerr == 0));
    if (strcmp(fl[6], "*") != 0) {
        rampart_widget_mode mode;
        rampart_widget_part missing;
        OK(rampart_widget_validation_mode(v, &mode, &missing));
        char got[64];
        static const char *parts[] = {"none", "tokens", "receiveAddress", "amount"};
        if (mode == RAMPART_WIDGET_MODE_STANDARD) snprintf(got, sizeof got, "standard");
        else if (mode == RAMPART_WIDGET_MODE_ONE_SCREEN_CHECKOUT) snprintf(got, sizeof got, "oneScreenCheckout");
        else snprintf(got, sizeof got, "incomplete:%s", parts[missing]);
        expect_text(name, "mode", fl[6], got);
    }
    char *want_url = text(fl[7]);
    char *url = NULL;
    if (want_url != NULL) {
        OK(rampart_widget_build_url(v, &url));
        expect_text(name, "url", want_url, url);
        /* canonical URLs are fixed points: parse, validate and build again */
        char *parsed = NULL;
        OK(rampart_widget_parse_url(config, url, &parsed));
        assert(strstr(parsed, "\"warnings\":[]") != NULL);
        rampart_string_free(parsed);
        rampart_string_free(url);
    } else {
        EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_build_url(v, &url));
        assert(url == NULL && strcmp(last_code(), "options_invalid") == 0);
    }
    rampart_widget_validation_free(v);
    rampart_widget_config_free(config);
    free_issues(issues, count);
    release(want_url);
    release(name);
    return 1;
}

static int run_parse(FILE *f, char **fl, int n) {
    assert(n == 11);
    char *name = text(fl[1]);
    rampart_widget_config *config = config_of(fl[2]);
    char *url = text(fl[3]);
    int count = atoi(fl[8]) + atoi(fl[9]) + atoi(fl[10]);
    expected_issue issues[MAX_ISSUES];
    read_issues(f, count, issues);
    char *json = NULL;
    if (strcmp(fl[4], "-") != 0) {
        EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_parse_url(config, url, &json));
        expect_text(name, "error", fl[4], last_code());
        assert(json == NULL);
    } else {
        OK(rampart_widget_parse_url(config, url, &json));
        check_parsed(json, fl[5], fl[6], issues, count, name);
        rampart_string_free(json);
        rampart_widget_validation *v = validate(config, fl[6], RAMPART_WIDGET_TARGET_URL, env_of(fl[5]));
        check_issues(v, "error", issues, count, name);
        check_issues(v, "warning", issues, count, name);
        char *want = text(fl[7]);
        char *canonical = NULL;
        if (want == NULL) {
            EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_build_url(v, &canonical));
        } else {
            OK(rampart_widget_build_url(v, &canonical));
            expect_text(name, "canonical", want, canonical);
            rampart_string_free(canonical);
        }
        release(want);
        rampart_widget_validation_free(v);
    }
    free_issues(issues, count);
    rampart_widget_config_free(config);
    release(url);
    release(name);
    return 1;
}

static int run_sign(char **fl, int n) {
    assert(n == 7);
    char *name = text(fl[1]), *key = text(fl[3]), *want = text(fl[5]);
    rampart_widget_validation *v = validate(NULL, fl[2], RAMPART_WIDGET_TARGET_URL, RAMPART_WIDGET_NO_ENVIRONMENT);
    assert(rampart_widget_validation_is_valid(v));
    char *url = NULL;
    uint64_t timestamp = strtoull(fl[4], NULL, 10);
    if (want != NULL) {
        OK(rampart_widget_sign_url(v, key, timestamp, &url));
        expect_text(name, "signed url", want, url);
        rampart_string_free(url);
    } else {
        EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_sign_url(v, key, timestamp, &url));
        expect_text(name, "error", fl[6], last_code());
        assert(url == NULL);
    }
    rampart_widget_validation_free(v);
    release(want);
    release(key);
    release(name);
    return 1;
}

static int run_verify(char **fl, int n) {
    assert(n == 9);
    char *name = text(fl[1]), *url = text(fl[2]), *key = text(fl[3]);
    uint64_t now = strtoull(fl[4], NULL, 10), max_age = strtoull(fl[5], NULL, 10);
    char *json = NULL;
    if (strcmp(fl[6], "-") != 0) {
        EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_verify_signed_url(NULL, url, key, now, max_age, &json));
        expect_text(name, "error", fl[6], last_code());
        assert(json == NULL);
    } else {
        OK(rampart_widget_verify_signed_url(NULL, url, key, now, max_age, &json));
        check_parsed(json, fl[7], fl[8], NULL, 0, name);
        rampart_string_free(json);
    }
    release(key);
    release(url);
    release(name);
    return 1;
}

static int run_script(char **fl, int n) {
    assert(n == 9);
    char *name = text(fl[1]), *nonce = text(fl[6]), *want = text(fl[7]);
    rampart_widget_config *config = config_of(fl[2]);
    rampart_widget_validation *v = validate(config, fl[5], target_of(fl[3]), env_of(fl[4]));
    assert(rampart_widget_validation_is_valid(v));
    char *html = NULL;
    if (want != NULL) {
        OK(rampart_widget_script_snippet(v, nonce, &html));
        expect_text(name, "html", want, html);
        rampart_string_free(html);
    } else {
        EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_script_snippet(v, nonce, &html));
        expect_text(name, "error", fl[8], last_code());
    }
    rampart_widget_validation_free(v);
    rampart_widget_config_free(config);
    release(want);
    release(nonce);
    release(name);
    return 1;
}

static int run_iframe(char **fl, int n) {
    assert(n == 11);
    char *name = text(fl[1]), *title = text(fl[8]), *want = text(fl[10]);
    rampart_widget_config *config = config_of(fl[2]);
    rampart_widget_validation *v = validate(config, fl[5], target_of(fl[3]), env_of(fl[4]));
    char *html = NULL;
    OK(rampart_widget_iframe_snippet(v, (uint32_t)atoi(fl[6]), (uint32_t)atoi(fl[7]), title, atoi(fl[9]) != 0,
                                     &html));
    expect_text(name, "html", want, html);
    rampart_string_free(html);
    rampart_widget_validation_free(v);
    rampart_widget_config_free(config);
    release(want);
    release(title);
    release(name);
    return 1;
}

static int run_csp(char **fl, int n) {
    assert(n == 5);
    char *name = text(fl[1]), *want = text(fl[4]);
    rampart_widget_config *config = config_of(fl[2]);
    char *json = NULL;
    OK(rampart_widget_csp(config, env_of(fl[3]), &json));
    expect_text(name, "csp", want, json);
    rampart_string_free(json);
    rampart_widget_config_free(config);
    release(want);
    release(name);
    return 1;
}

static int run_address(char **fl, int n) {
    assert(n == 7);
    char *address = text(fl[2]);
    bool allow = atoi(fl[3]) != 0;
    const char *network = NULL, *kind = NULL;
    if (strcmp(fl[6], "-") == 0) {
        OK(rampart_address_validate(fl[1], address, allow, &network, &kind));
        expect_text(address, "network", fl[4], network);
        expect_text(address, "kind", fl[5], kind);
    } else {
        EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_address_validate(fl[1], address, allow, &network, &kind));
        expect_text(address, "address error", fl[6], last_code());
        assert(network == NULL && kind == NULL);
    }
    release(address);
    return 1;
}

static void run_vectors(const char *path) {
    FILE *f = fopen(path, "r");
    assert(f != NULL);
    char line[65536];
    char *fields[MAX_FIELDS];
    int validate_cases = 0, parse_cases = 0, sign_cases = 0, snippet_cases = 0, address_cases = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        assert(strchr(line, '\n') != NULL); /* the line fit */
        int n = split(line, fields);
        const char *kind = fields[0];
        if (strcmp(kind, "validate") == 0) validate_cases += run_validate(f, fields, n);
        else if (strcmp(kind, "parse") == 0) parse_cases += run_parse(f, fields, n);
        else if (strcmp(kind, "sign") == 0) sign_cases += run_sign(fields, n);
        else if (strcmp(kind, "verify") == 0) sign_cases += run_verify(fields, n);
        else if (strcmp(kind, "script") == 0) snippet_cases += run_script(fields, n);
        else if (strcmp(kind, "iframe") == 0) snippet_cases += run_iframe(fields, n);
        else if (strcmp(kind, "csp") == 0) snippet_cases += run_csp(fields, n);
        else if (strcmp(kind, "address") == 0) address_cases += run_address(fields, n);
        else assert(!"unknown record");
    }
    fclose(f);
    printf("test_widget: vectors: %d validate/build, %d parse, %d sign/verify, %d snippet/csp, %d address\n",
           validate_cases, parse_cases, sign_cases, snippet_cases, address_cases);
    assert(validate_cases > 0 && parse_cases > 0 && sign_cases > 0 && snippet_cases > 0 && address_cases > 0);
}

static const char BAD_UTF8[] = {'\xff', '\xfe', '\0'};

static const char VALID_OPTIONS[] = "{\"environment\":\"sandbox\",\"publicKey\":\"pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc\"}";

static void misuse(void) {
    rampart_widget_config *config = (rampart_widget_config *)0x1; /* must stay untouched */
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_config_default(NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_config_from_json(NULL, &config));
    assert(strcmp(last_message(), "json must not be NULL") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_config_from_json(BAD_UTF8, &config));
    assert(strcmp(last_message(), "json must be valid Unicode text") == 0 && strcmp(last_code(), "invalid_input") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_config_from_json("{", &config));
    EXPECT(RAMPART_STATUS_CONFIG, rampart_widget_config_from_json("{\"productionRoot\":\"http://x.example\"}", &config));
    assert(strcmp(last_code(), "config_root_not_https") == 0);
    EXPECT(RAMPART_STATUS_CONFIG, rampart_widget_config_from_json("[]", &config));
    assert(strcmp(last_code(), "config_json_invalid") == 0);
    assert(config == (rampart_widget_config *)0x1);
    OK(rampart_widget_config_default(&config));
    assert(last_code()[0] == '\0');

    rampart_widget_validation *v = NULL;
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validate(config, NULL, RAMPART_WIDGET_TARGET_URL, 0, &v));
    assert(strcmp(last_message(), "options_json must not be NULL") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validate(config, BAD_UTF8, RAMPART_WIDGET_TARGET_URL, 0, &v));
    assert(strcmp(last_message(), "options_json must be valid Unicode text") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validate(config, "{\"a\":", RAMPART_WIDGET_TARGET_URL, 0, &v));
    assert(strcmp(last_message(), "options_json must be JSON text") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validate(config, VALID_OPTIONS, 7, 0, &v));
    assert(strstr(last_message(), "target") != NULL);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validate(config, VALID_OPTIONS, RAMPART_WIDGET_TARGET_URL, 5, &v));
    assert(strstr(last_message(), "environment") != NULL);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validate(config, VALID_OPTIONS, RAMPART_WIDGET_TARGET_URL, 0, NULL));
    assert(v == NULL);

    /* JSON that is not an object is a validation result, not a status */
    OK(rampart_widget_validate(NULL, "[1]", RAMPART_WIDGET_TARGET_URL, RAMPART_WIDGET_NO_ENVIRONMENT, &v));
    assert(!rampart_widget_validation_is_valid(v) && rampart_widget_validation_error_count(v) == 1);
    const char *code = NULL;
    OK(rampart_widget_validation_error_at(v, 0, &code, NULL, NULL, NULL, NULL));
    assert(strcmp(code, "options_not_object") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validation_error_at(v, 1, &code, NULL, NULL, NULL, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validation_warning_at(v, 0, &code, NULL, NULL, NULL, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validation_error_at(v, 0, NULL, NULL, NULL, NULL, NULL));
    char *json = NULL;
    OK(rampart_widget_validation_to_json(v, &json));
    assert(strstr(json, "\"options_not_object\"") != NULL && strstr(json, "\"options\":null") != NULL);
    rampart_string_free(json);
    char *out = NULL;
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_build_url(v, &out));
    assert(strcmp(last_code(), "options_invalid") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_iframe_snippet(v, 0, 0, NULL, false, &out));
    assert(out == NULL);
    rampart_widget_validation_free(v);

    /* NULL handles */
    assert(!rampart_widget_validation_is_valid(NULL));
    assert(rampart_widget_validation_error_count(NULL) == 0 && rampart_widget_validation_warning_count(NULL) == 0);
    rampart_widget_mode mode;
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validation_mode(NULL, &mode, NULL));
    assert(strcmp(last_message(), "validation must not be NULL") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validation_error_at(NULL, 0, &code, NULL, NULL, NULL, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validation_to_json(NULL, &json));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_build_url(NULL, &out));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_sign_url(NULL, "sk_sandbox_x", 1, &out));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_script_snippet(NULL, NULL, &out));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_iframe_snippet(NULL, 0, 0, NULL, false, &out));
    assert(out == NULL);

    /* a valid validation, then bad arguments around it */
    OK(rampart_widget_validate(config, VALID_OPTIONS, RAMPART_WIDGET_TARGET_URL, RAMPART_WIDGET_NO_ENVIRONMENT, &v));
    assert(rampart_widget_validation_is_valid(v));
    OK(rampart_widget_validation_mode(v, &mode, NULL));
    assert(mode == RAMPART_WIDGET_MODE_STANDARD);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validation_mode(v, NULL, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_build_url(v, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_validation_to_json(v, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_sign_url(v, NULL, 1, &out));
    assert(strcmp(last_message(), "secret_key must not be NULL") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_sign_url(v, BAD_UTF8, 1, &out));
    assert(strcmp(last_message(), "secret_key must be valid Unicode text") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_sign_url(v, "sk_production_abc", 1, &out));
    assert(strcmp(last_code(), "signature_key_environment") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_sign_url(v, "sk_sandbox_abc", 1, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_script_snippet(v, NULL, &out));
    assert(strcmp(last_code(), "snippet_not_script_target") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_iframe_snippet(v, 0, 0, BAD_UTF8, false, &out));
    assert(strcmp(last_message(), "title must be valid Unicode text") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_iframe_snippet(v, 0, 0, NULL, false, NULL));
    assert(out == NULL);
    OK(rampart_widget_iframe_snippet(v, 0, 0, NULL, true, &out));
    assert(strstr(out, "width=\"420\" height=\"550\"") != NULL && strstr(out, "loading=\"lazy\"") != NULL);
    rampart_string_free(out);
    out = NULL;
    char *signed_url = NULL;
    OK(rampart_widget_sign_url(v, "sk_sandbox_abc", 1700000000, &signed_url));
    rampart_widget_validation_free(v);

    /* URLs: NULL and bytes that are not UTF-8 */
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_parse_url(config, NULL, &json));
    assert(strcmp(last_message(), "url must not be NULL") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_parse_url(config, BAD_UTF8, &json));
    assert(strcmp(last_code(), "url_invalid") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_parse_url(config, signed_url, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_parse_url(NULL, "https://evil.example/?a=b", &json));
    assert(strcmp(last_code(), "url_unknown_root") == 0);
    OK(rampart_widget_parse_url(NULL, signed_url, &json));
    assert(strstr(json, "url_signature_not_verified") != NULL);
    rampart_string_free(json);
    json = NULL;
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_verify_signed_url(config, NULL, "sk_sandbox_abc", 1, 600, &json));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_verify_signed_url(config, BAD_UTF8, "sk_sandbox_abc", 1, 600, &json));
    assert(strcmp(last_code(), "url_invalid") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_verify_signed_url(config, signed_url, NULL, 1, 600, &json));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_verify_signed_url(config, signed_url, BAD_UTF8, 1, 600, &json));
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_widget_verify_signed_url(config, signed_url, "sk_sandbox_abd", 1700000000, 600, &json));
    assert(strcmp(last_code(), "signature_mismatch") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_widget_verify_signed_url(config, signed_url, "sk_sandbox_abc", 1700000601, 600, &json));
    assert(strcmp(last_code(), "signature_expired") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_widget_verify_signed_url(config, signed_url, "sk_sandbox_abc", 1700000000, 600, NULL));
    assert(json == NULL);
    OK(rampart_widget_verify_signed_url(config, signed_url, "sk_sandbox_abc", 1700000000, 600, &json));
    assert(starts_with(json, "{\"environment\":\"sandbox\","));
    rampart_string_free(json);
    rampart_string_free(signed_url);

    /* CSP */
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_csp(config, 9, &json));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_csp(config, RAMPART_ENVIRONMENT_SANDBOX, NULL));

    /* addresses */
    const char *network = NULL, *kind = NULL;
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_address_validate(NULL, "x", false, &network, &kind));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_address_validate(BAD_UTF8, "x", false, &network, &kind));
    assert(strcmp(last_message(), "chain must be valid Unicode text") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_address_validate("dogecoin", "x", false, &network, &kind));
    assert(strcmp(last_code(), "invalid_input") == 0 && strstr(last_message(), "chain") != NULL);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_address_validate("bitcoin", NULL, false, &network, &kind));
    assert(strcmp(last_message(), "address must not be NULL") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_address_validate("bitcoin", BAD_UTF8, false, &network, &kind));
    assert(strcmp(last_code(), "address_bad_character") == 0);
    assert(network == NULL && kind == NULL);
    OK(rampart_address_validate("bitcoin", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", false, NULL, NULL));
    OK(rampart_address_validate("ethereum", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", false, &network, &kind));
    assert(strcmp(network, "mainnet") == 0 && strcmp(kind, "evm") == 0);

    /* the 2FA statuses give their kind's name as the code */
    bool accepted;
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_verify(NULL, "123456", 0, 1, &accepted, NULL));
    assert(strcmp(last_code(), "invalid_input") == 0);

    rampart_widget_config_free(config);
    rampart_widget_config_free(NULL);
    rampart_widget_config_free(NULL);
    rampart_widget_validation_free(NULL);
    rampart_widget_validation_free(NULL);
    rampart_totp_secret_free(NULL);
}

/* A clientName that tries to close the script element stays inside the JSON string. */
static void hostile_client_name(void) {
    const char *options =
        "{\"environment\":\"sandbox\",\"publicKey\":\"pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc\","
        "\"targetContainerId\":\"w\",\"clientName\":\"</script><script>alert(1)</script>\"}";
    rampart_widget_validation *v = NULL;
    OK(rampart_widget_validate(NULL, options, RAMPART_WIDGET_TARGET_SCRIPT, RAMPART_WIDGET_NO_ENVIRONMENT, &v));
    assert(rampart_widget_validation_is_valid(v));
    char *html = NULL;
    OK(rampart_widget_script_snippet(v, "bm9uY2U=", &html));
    /* exactly the two script elements the snippet opens are closed */
    int closes = 0;
    for (const char *p = html; (p = strstr(p, "</script>")) != NULL; p++) closes++;
    assert(closes == 2);
    assert(strstr(html, "alert(1)") != NULL && strstr(html, "<script>alert") == NULL);
    assert(strstr(html, "\\u003c/script\\u003e") != NULL);
    assert(strstr(html, "nonce=\"bm9uY2U=\"") != NULL);
    rampart_string_free(html);
    html = NULL;
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_script_snippet(v, "\"><b>", &html));
    assert(strcmp(last_code(), "snippet_nonce_invalid") == 0 && html == NULL);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_script_snippet(v, BAD_UTF8, &html));
    assert(strcmp(last_message(), "nonce must be valid Unicode text") == 0);
    rampart_widget_validation_free(v);
}

/* Options JSON holding text that is not valid Unicode (bytes that are not UTF-8, or a \uD800
 * escape without its pair): RAMPART_STATUS_INVALID_INPUT naming the option path, with the
 * message Python gives for a lone surrogate at the same place; never a replacement character. */
static void expect_not_unicode(const char *options, const char *message) {
    rampart_widget_validation *v = (rampart_widget_validation *)0x1;
    EXPECT(RAMPART_STATUS_INVALID_INPUT,
           rampart_widget_validate(NULL, options, RAMPART_WIDGET_TARGET_URL, RAMPART_WIDGET_NO_ENVIRONMENT, &v));
    if (strcmp(last_message(), message) != 0) fprintf(stderr, "  want \"%s\", got \"%s\"\n", message, last_message());
    assert(strcmp(last_message(), message) == 0);
    assert(strcmp(last_code(), "invalid_input") == 0);
    assert(v == (rampart_widget_validation *)0x1);
}

static void not_unicode_options(void) {
    expect_not_unicode("{\"publicKey\":\"pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc\",\"receiveAddress\":{\"btc\":\"bc1\xff\"}}",
                       "receiveAddress.btc must be valid Unicode text");
    expect_not_unicode("{\"receiveAddress\":{\"btc\":\"bc1\\ud800\"}}", "receiveAddress.btc must be valid Unicode text");
    expect_not_unicode("{\"receiveAddress\":{\"btc\":\"\\udc00x\"}}", "receiveAddress.btc must be valid Unicode text");
    expect_not_unicode("{\"receiveAddress\":{\"b\xc3\":\"x\"}}", "receiveAddress must be valid Unicode text");
    expect_not_unicode("{\"\xed\xa0\x80\":1}", "options_json must be valid Unicode text");
    expect_not_unicode("{\"tokens\":[\"btc\",\"et\xe2\x82\"]}", "tokens[1] must be valid Unicode text");
    expect_not_unicode("{\"amount\":\"5\",\"clientName\":\"Acme \\uD83D\"}", "clientName must be valid Unicode text");
    expect_not_unicode("\"\xff\"", "options_json must be valid Unicode text");
    expect_not_unicode("{\"amount\":5\xff}", "options_json must be valid Unicode text");
    /* an option that happens to be called url or text is not the partner's widget setting */
    expect_not_unicode("{\"url\":\"\xff\"}", "url must be valid Unicode text");
    expect_not_unicode("{\"a\":{\"contactId\":\"\xff\"}}", "a.contactId must be valid Unicode text");

    /* a surrogate pair written as escapes is valid text, and an escaped backslash is no escape */
    rampart_widget_validation *v = NULL;
    OK(rampart_widget_validate(NULL, "{\"clientName\":\"Acme \\ud83d\\ude00\",\"homeScreenMessage\":\"\\\\ud800\"}",
                               RAMPART_WIDGET_TARGET_URL, RAMPART_WIDGET_NO_ENVIRONMENT, &v));
    rampart_widget_validation_free(v);

    /* the widget configuration reads its JSON the same way */
    rampart_widget_config *config = (rampart_widget_config *)0x1;
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_config_from_json("{\"coins\":[{\"symbol\":\"\xff\"}]}", &config));
    assert(strcmp(last_message(), "coins[0].symbol must be valid Unicode text") == 0);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_widget_config_from_json("{\"brand\":\"\\udfff\"}", &config));
    assert(strcmp(last_message(), "brand must be valid Unicode text") == 0);
    assert(config == (rampart_widget_config *)0x1);
}

/* The secret handle agrees with the base32 verify. */
static void secret_handle(void) {
    const char *secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
    rampart_totp_secret *handle = NULL;
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_secret_from_base32(NULL, &handle));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_secret_from_base32(BAD_UTF8, &handle));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_secret_from_base32("!!", &handle));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_secret_from_base32(secret, NULL));
    assert(handle == NULL);
    OK(rampart_totp_secret_from_base32(secret, &handle));
    char *code = code_at(secret, 1700000000);
    bool accepted = false;
    uint64_t step = 0;
    OK(rampart_totp_verify_secret(handle, code, 1700000030, 1, &accepted, &step));
    assert(accepted && step == 1700000000 / 30);
    OK(rampart_totp_verify_secret(handle, code, 1700000030, 0, &accepted, &step));
    assert(!accepted && step == 0);
    OK(rampart_totp_verify_secret(handle, BAD_UTF8, 1700000000, 1, &accepted, NULL));
    assert(!accepted);
    OK(rampart_totp_verify_secret(handle, NULL, 1700000000, 1, &accepted, NULL));
    assert(!accepted);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_verify_secret(handle, code, 1700000000, 3, &accepted, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_verify_secret(NULL, code, 1700000000, 1, &accepted, NULL));
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_totp_verify_secret(handle, code, 1700000000, 1, NULL, NULL));
    rampart_string_free(code);
    rampart_totp_secret_free(handle);
}

/* Who may embed the widget (SPEC section 6.2), pure: origins checked and made canonical, the
 * frame-ancestors value per environment, whether a page's origin may talk to the widget. */
static void expect_invalid_origins(rampart_status got, const char *message) {
    EXPECT(RAMPART_STATUS_INVALID_INPUT, got);
    if (strcmp(last_message(), message) != 0) fprintf(stderr, "  want \"%s\", got \"%s\"\n", message, last_message());
    assert(strcmp(last_message(), message) == 0);
    assert(strcmp(last_code(), "invalid_input") == 0);
}

/* `got` is the status of a call that wrote `*value` (read only after the call: the order in
 * which arguments are evaluated is unspecified). */
static void expect_string(rampart_status got, char **value, const char *want) {
    OK(got);
    if (strcmp(*value, want) != 0) fprintf(stderr, "  want %s, got %s\n", want, *value);
    assert(strcmp(*value, want) == 0);
    rampart_string_free(*value);
    *value = NULL;
}

static bool allowed(const char *origin, const char *registered, uint32_t environment) {
    bool out = !0;
    OK(rampart_widget_origin_allowed(origin, registered, environment, &out));
    return out;
}

static void embedding_origins(void) {
    const uint32_t SANDBOX = RAMPART_ENVIRONMENT_SANDBOX, PRODUCTION = RAMPART_ENVIRONMENT_PRODUCTION;
    char *out = NULL;
    expect_string(rampart_widget_check_origins("[\"HTTPS://Shop.Example:443\",\"http://localhost:3000\"]", SANDBOX, &out),
                  &out, "[\"https://shop.example\",\"http://localhost:3000\"]");
    OK(rampart_widget_check_origins("[]", PRODUCTION, &out));
    assert(strcmp(out, "[]") == 0);
    rampart_string_free(out);
    out = (char *)0x1;
    expect_invalid_origins(rampart_widget_check_origins("[\"https://a.example\",\"http://b.example\"]", PRODUCTION, &out),
                           "widgetOrigins[1] must be https in production");
    expect_invalid_origins(rampart_widget_check_origins("[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\","
                                                        "\"l\",\"m\",\"n\",\"o\",\"p\",\"q\",\"r\",\"s\",\"t\",\"u\"]",
                                                        SANDBOX, &out),
                           "widgetOrigins may list at most 20 origins");
    expect_invalid_origins(rampart_widget_check_origins("[\"https://a.example\",\"https://b\xff\xfe\"]", SANDBOX, &out),
                           "widgetOrigins[1] must be valid Unicode text");
    expect_invalid_origins(rampart_widget_check_origins("[\"\\udc00x\"]", SANDBOX, &out),
                           "widgetOrigins[0] must be valid Unicode text");
    expect_invalid_origins(rampart_widget_check_origins(NULL, SANDBOX, &out), "origins_json must not be NULL");
    expect_invalid_origins(rampart_widget_check_origins("{}", SANDBOX, &out), "origins_json must be a JSON array of strings");
    expect_invalid_origins(rampart_widget_check_origins("[]", 7, &out),
                           "environment must be RAMPART_ENVIRONMENT_SANDBOX or RAMPART_ENVIRONMENT_PRODUCTION");
    expect_invalid_origins(rampart_widget_check_origins("[]", SANDBOX, NULL), "out_origins_json must not be NULL");
    assert(out == (char *)0x1);

    /* frame-ancestors for both environments; nothing but origins reaches the header */
    const char *two = "[\"https://a.example\",\"HTTPS://B.example:8443\"]";
    expect_string(rampart_widget_frame_ancestors(two, PRODUCTION, &out), &out,
                  "frame-ancestors https://a.example https://b.example:8443");
    expect_string(rampart_widget_frame_ancestors(two, SANDBOX, &out), &out,
                  "frame-ancestors https://a.example https://b.example:8443 http://localhost:* http://127.0.0.1:*");
    expect_string(rampart_widget_frame_ancestors("[]", SANDBOX, &out), &out,
                  "frame-ancestors http://localhost:* http://127.0.0.1:*");
    expect_string(rampart_widget_frame_ancestors("[]", PRODUCTION, &out), &out, "frame-ancestors 'none'");
    out = (char *)0x1;
    expect_invalid_origins(rampart_widget_frame_ancestors("[\"https://a.example; script-src *\"]", SANDBOX, &out),
                           "widgetOrigins[0] must be an origin: http(s)://host[:port], without path, query or "
                           "credentials");
    expect_invalid_origins(rampart_widget_frame_ancestors("[\"http://a.example\"]", PRODUCTION, &out),
                           "widgetOrigins[0] must be https in production");
    expect_invalid_origins(rampart_widget_frame_ancestors("[\"\xff\xfe\"]", PRODUCTION, &out),
                           "widgetOrigins[0] must be valid Unicode text");
    expect_invalid_origins(rampart_widget_frame_ancestors("[]", SANDBOX, NULL), "out_value must not be NULL");
    assert(out == (char *)0x1);

    /* whether a page's origin may talk to the widget: an outcome, not an error */
    const char *registered = "[\"HTTPS://Shop.Example:443\"]";
    assert(allowed("https://shop.example", registered, PRODUCTION));
    assert(!allowed("https://shop.example:444", registered, PRODUCTION));
    assert(allowed("http://localhost:5173", registered, SANDBOX));
    assert(!allowed("http://localhost:5173", registered, PRODUCTION));
    assert(!allowed("http://localhost.evil.example", "[]", SANDBOX));
    assert(!allowed("null", "[]", SANDBOX));
    bool flag = true;
    expect_invalid_origins(rampart_widget_origin_allowed("http://a.example", "[\"http://a.example\"]", PRODUCTION, &flag),
                           "widgetOrigins[0] must be https in production");
    expect_invalid_origins(rampart_widget_origin_allowed("https://a\xff\xfe", "[]", SANDBOX, &flag),
                           "origin must be valid Unicode text");
    expect_invalid_origins(rampart_widget_origin_allowed("https://a.example", "[\"\\ud800\"]", SANDBOX, &flag),
                           "widgetOrigins[0] must be valid Unicode text");
    expect_invalid_origins(rampart_widget_origin_allowed(NULL, "[]", SANDBOX, &flag), "origin must not be NULL");
    expect_invalid_origins(rampart_widget_origin_allowed("https://a.example", NULL, SANDBOX, &flag),
                           "registered_json must not be NULL");
    expect_invalid_origins(rampart_widget_origin_allowed("https://a.example", "[]", SANDBOX, NULL),
                           "out_allowed must not be NULL");
    assert(flag);
}

int main(int argc, char **argv) {
    assert(argc == 2);
    run_vectors(argv[1]);
    misuse();
    hostile_client_name();
    not_unicode_options();
    secret_handle();
    embedding_origins();
    printf("test_widget: ok\n");
    return 0;
}
