/* rampart_service_open with a postgres:// URL (SPEC section 7): two handles on one database see
 * the same partners, widget settings, keys and 2FA state; a code accepted through one is
 * refused through the other, also when eight threads submit it through both at once; a URL
 * needs config.master_key; the URL's password is in no message or cause; an unreachable
 * database is RAMPART_STATUS_INTERNAL.
 *
 * Needs the PostgreSQL that RAMPART_TEST_DATABASE_URL names (`make c-test` starts one with
 * scripts/with-postgres.sh) and psql (RAMPART_TEST_PG_BIN, else PATH) to make a schema of its
 * own; without them it fails. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

#define CONTACT "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11"
#define OPERATOR "ops@example.com"
#define PASSWORD "Pg-s3cret-9d1f" /* trust authentication ignores it; it must never be shown */
#define NEEDS_KEY                                                                                  \
    "a PostgreSQL database needs config.master_key: every service sharing it must seal and open " \
    "secrets with the same key"
#define THREADS 8

static uint64_t now = 1700000000; /* the manual clock both handles read */
static const uint8_t KEY[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

static rampart_config config_with_key(const uint8_t *key) {
    rampart_config config = rampart_config_default();
    config.clock = manual_clock;
    config.clock_context = &now;
    config.master_key = key;
    config.master_key_len = key ? 32 : 0;
    return config;
}

static rampart_service *open_url(const char *url) {
    rampart_config config = config_with_key(KEY);
    rampart_service *service = NULL;
    OK(rampart_service_open(url, &config, &service));
    assert(service != NULL);
    return service;
}

/* Run psql on the test database: `CREATE SCHEMA <schema>`. */
static void create_schema(const char *base_url, const char *schema) {
    char psql[1024] = "psql";
    const char *bin = getenv("RAMPART_TEST_PG_BIN");
    if (bin && *bin) {
        snprintf(psql, sizeof psql, "%s/psql", bin);
    }
    char sql[128];
    snprintf(sql, sizeof sql, "CREATE SCHEMA %s", schema);
    fflush(NULL);
    pid_t pid = fork();
    assert(pid >= 0);
    if (pid == 0) {
        execlp(psql, psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", base_url, "-c", sql, (char *)NULL);
        perror(psql);
        _exit(127);
    }
    int status = 0;
    assert(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "psql could not create schema %s\n", schema);
        exit(1);
    }
}

/* `base` with one more query parameter. The caller frees the result. */
static char *with_param(const char *base, const char *param) {
    size_t n = strlen(base) + strlen(param) + 2;
    char *url = malloc(n);
    assert(url != NULL);
    snprintf(url, n, "%s%c%s", base, strchr(base, '?') ? '&' : '?', param);
    return url;
}

/* `url` (postgres://user@host...) with PASSWORD after the user name. The caller frees it. */
static char *with_password(const char *url) {
    const char *user = strstr(url, "://");
    assert(user != NULL);
    user += 3;
    const char *at = strchr(user, '@');
    assert(at != NULL && at < strchr(user, '/'));
    size_t n = strlen(url) + sizeof PASSWORD + 1;
    char *out = malloc(n);
    assert(out != NULL);
    snprintf(out, n, "%.*s:%s%s", (int)(at - url), url, PASSWORD, at);
    return out;
}

/* A port on 127.0.0.1 that nothing listens on. */
static unsigned closed_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert(fd >= 0);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    assert(bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0);
    socklen_t len = sizeof addr;
    assert(getsockname(fd, (struct sockaddr *)&addr, &len) == 0);
    close(fd);
    return ntohs(addr.sin_port);
}

/* The last failure's message and cause hold no password. */
static void check_last_error_hides_password(void) {
    char message[512], cause[1024];
    rampart_last_error_message(message, sizeof message);
    rampart_last_error_cause(cause, sizeof cause);
    assert(strstr(message, PASSWORD) == NULL);
    assert(strstr(cause, PASSWORD) == NULL);
}

/* ---- eight threads, two handles, one code ---- */

static rampart_service *racers[2];
static const char *race_partner;
static char race_code[7];
static pthread_barrier_t barrier;
static int accepted_count;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void *race(void *arg) {
    const rampart_service *service = racers[(size_t)arg % 2];
    pthread_barrier_wait(&barrier);
    bool accepted = false;
    OK(rampart_service_verify_2fa(service, race_partner, CONTACT, race_code, NULL, &accepted, NULL, NULL));
    if (accepted) {
        pthread_mutex_lock(&count_lock);
        accepted_count++;
        pthread_mutex_unlock(&count_lock);
    }
    return NULL;
}

static void test_two_handles_share_one_database(const char *url) {
    rampart_service *a = open_url(url);
    char *b_url = malloc(strlen(url) + 3); /* "postgresql" is 2 longer, plus the NUL */
    assert(b_url != NULL && starts_with(url, "postgres://"));
    sprintf(b_url, "postgresql://%s", url + strlen("postgres://")); /* both schemes are accepted */
    rampart_service *b = open_url(b_url);
    free(b_url);
    OK(rampart_service_ping(b));

    char *partner = NULL, *secret_key = NULL, *publishable = NULL;
    OK(rampart_service_create_partner(a, "Acme", RAMPART_ENVIRONMENT_SANDBOX, &partner, &secret_key, &publishable));
    rampart_string_free(publishable);
    char *text = NULL;
    OK(rampart_service_set_widget_text(a, partner, "Back to Acme"));
    OK(rampart_service_widget_text(b, partner, &text));
    assert(text != NULL && strcmp(text, "Back to Acme") == 0);
    rampart_string_free(text);

    /* 2FA through one handle, seen through the other. */
    char *qr = NULL, *secret = NULL;
    OK(rampart_service_create_2fa(a, partner, CONTACT, NULL, NULL, &qr, &secret, NULL));
    rampart_string_free(qr);
    bool enabled = true;
    OK(rampart_service_status_2fa(b, partner, CONTACT, &enabled));
    assert(!enabled);
    char *code = code_at(secret, now);
    OK(rampart_service_enable_2fa(b, partner, CONTACT, code, NULL)); /* the secret a created */
    rampart_string_free(code);
    OK(rampart_service_status_2fa(a, partner, CONTACT, &enabled));
    assert(enabled);

    now += 30;
    code = code_at(secret, now);
    bool accepted = false;
    OK(rampart_service_verify_2fa(a, partner, CONTACT, code, NULL, &accepted, NULL, NULL));
    assert(accepted);
    /* The code is used up everywhere: replayed through either handle, it is refused. */
    OK(rampart_service_verify_2fa(b, partner, CONTACT, code, NULL, &accepted, NULL, NULL));
    assert(!accepted);
    OK(rampart_service_verify_2fa(a, partner, CONTACT, code, NULL, &accepted, NULL, NULL));
    assert(!accepted);
    rampart_string_free(code);

    /* A fresh code from eight threads through both handles at once: one success. */
    now += 30;
    code = code_at(secret, now);
    snprintf(race_code, sizeof race_code, "%s", code);
    rampart_string_free(code);
    racers[0] = a;
    racers[1] = b;
    race_partner = partner;
    pthread_t threads[THREADS];
    assert(pthread_barrier_init(&barrier, NULL, THREADS) == 0);
    for (size_t i = 0; i < THREADS; i++) assert(pthread_create(&threads[i], NULL, race, (void *)i) == 0);
    for (size_t i = 0; i < THREADS; i++) assert(pthread_join(threads[i], NULL) == 0);
    pthread_barrier_destroy(&barrier);
    assert(accepted_count == 1);

    /* Keys rotated through one handle are the keys the other accepts. */
    char *who = NULL;
    bool legacy = true;
    OK(rampart_service_authenticate(b, secret_key, &who, &legacy));
    assert(strcmp(who, partner) == 0 && !legacy);
    rampart_string_free(who);
    char *rotated = NULL;
    OK(rampart_service_rotate_keys(a, OPERATOR, partner, &rotated, &publishable));
    rampart_string_free(publishable);
    EXPECT(RAMPART_STATUS_UNAUTHORIZED, rampart_service_authenticate(b, secret_key, &who, &legacy));
    OK(rampart_service_authenticate(b, rotated, &who, &legacy));
    assert(strcmp(who, partner) == 0);
    rampart_string_free(who);
    rampart_string_free(rotated);
    rampart_string_free(secret_key);
    rampart_service_free(a);
    rampart_service_free(b);

    /* A handle opened later sees it all; disabling through it is seen by a fresh one. */
    now += 30;
    rampart_service *c = open_url(url);
    OK(rampart_service_status_2fa(c, partner, CONTACT, &enabled));
    assert(enabled);
    code = code_at(secret, now);
    OK(rampart_service_disable_2fa(c, partner, CONTACT, code, NULL));
    rampart_string_free(code);
    rampart_service_free(c);
    rampart_service *d = open_url(url);
    OK(rampart_service_status_2fa(d, partner, CONTACT, &enabled));
    assert(!enabled);
    rampart_service_free(d);

    /* Another key under the same id opens none of the stored secrets: refused at open. */
    rampart_service *e = open_url(url);
    char *pending = NULL;
    OK(rampart_service_create_2fa(e, partner, CONTACT, NULL, NULL, &qr, &pending, NULL));
    rampart_string_free(qr);
    rampart_string_free(pending);
    rampart_service_free(e);
    static const uint8_t OTHER_KEY[32] = {0};
    rampart_config other = config_with_key(OTHER_KEY);
    rampart_service *refused = (rampart_service *)&now;
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open(url, &other, &refused));
    assert(refused == (rampart_service *)&now); /* untouched on failure */

    rampart_string_free(secret);
    rampart_string_free(partner);
}

static void test_a_url_needs_a_master_key(const char *url) {
    rampart_config config = config_with_key(NULL);
    rampart_service *service = NULL;
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open(url, &config, &service));
    assert(strcmp(last_message(), NEEDS_KEY) == 0);
    config.environment = RAMPART_ENVIRONMENT_PRODUCTION;
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open(url, &config, &service));
    assert(strcmp(last_message(), NEEDS_KEY) == 0);
    assert(service == NULL);

    /* A URL must be UTF-8. */
    config = config_with_key(KEY);
    EXPECT(RAMPART_STATUS_INVALID_INPUT, rampart_service_open("postgres://h\xff/db", &config, &service));
    assert(strcmp(last_message(), "db_path must be valid Unicode text") == 0);
}

static void test_the_password_is_never_shown(const char *url) {
    char *secret_url = with_password(url);
    rampart_service *service = open_url(secret_url); /* trust authentication: it connects */
    OK(rampart_service_ping(service));
    rampart_service_free(service);
    service = NULL;

    rampart_config config = config_with_key(NULL);
    EXPECT(RAMPART_STATUS_CONFIG, rampart_service_open(secret_url, &config, &service));
    check_last_error_hides_password();
    free(secret_url);

    char down[256];
    snprintf(down, sizeof down, "postgres://postgres:%s@127.0.0.1:%u/postgres?sslmode=disable", PASSWORD,
             closed_port());
    config = config_with_key(KEY);
    EXPECT(RAMPART_STATUS_INTERNAL, rampart_service_open(down, &config, &service));
    check_last_error_hides_password();
    assert(service == NULL);
}

static void test_an_unreachable_database_is_internal(void) {
    char url[128];
    snprintf(url, sizeof url, "postgres://postgres@127.0.0.1:%u/postgres?sslmode=disable", closed_port());
    rampart_config config = config_with_key(KEY);
    rampart_service *service = NULL;
    time_t started = time(NULL);
    EXPECT(RAMPART_STATUS_INTERNAL, rampart_service_open(url, &config, &service));
    assert(service == NULL);
    assert(strcmp(last_message(), "Internal server error") == 0);
    char cause[512];
    assert(rampart_last_error_cause(cause, sizeof cause) > 0); /* why, for the log */
    assert(time(NULL) - started < 60);
}

int main(void) {
    const char *base = getenv("RAMPART_TEST_DATABASE_URL");
    if (base == NULL || *base == '\0') {
        fprintf(stderr, "RAMPART_TEST_DATABASE_URL is not set: run `make c-test` (scripts/with-postgres.sh "
                        "starts a PostgreSQL)\n");
        return 1;
    }
    char schema[64], param[128];
    snprintf(schema, sizeof schema, "t_c_%ld_%ld", (long)getpid(), (long)time(NULL));
    create_schema(base, schema);
    snprintf(param, sizeof param, "options=-c%%20search_path%%3D%s", schema);
    char *url = with_param(base, param);

    test_two_handles_share_one_database(url);
    test_a_url_needs_a_master_key(url);
    test_the_password_is_never_shown(url);
    test_an_unreachable_database_is_internal();

    free(url);
    printf("test_postgres: ok\n");
    return 0;
}
