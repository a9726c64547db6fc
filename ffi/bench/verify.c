/* The pure TOTP verify helper through the C ABI beside liboath's oath_totp_validate (the OATH
 * Toolkit, Debian liboath-dev) on the same secret, time and window (one step either side).
 * `make c-bench` builds it against a release librampart.a with -O2 and runs it.
 *
 * What differs, so the figures read right: rampart_totp_verify takes the secret as base32
 * text (decoded on every call), rampart_totp_verify_secret a handle decoded and keyed once; both compute
 * all three candidates and compare them in constant time. oath_totp_validate takes raw secret
 * bytes and returns at the first match. */
#define _POSIX_C_SOURCE 200809L
#include <oath.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rampart.h"

#define ROUNDS 11
#define ITERATIONS 200000

static const char SECRET_BYTES[] = "12345678901234567890"; /* RFC 6238 Appendix B */
static const char *SECRET_BASE32 = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
static const time_t NOW = 1700000000;

static volatile long sink; /* keeps results alive */

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef void (*body_fn)(const char *token);

static void rampart_body(const char *token) {
    bool accepted = false;
    if (rampart_totp_verify(SECRET_BASE32, token, (uint64_t)NOW, 1, &accepted, NULL) != RAMPART_OK) abort();
    sink += accepted;
}

static rampart_totp_secret *SECRET_HANDLE;

static void rampart_secret_body(const char *token) {
    bool accepted = false;
    if (rampart_totp_verify_secret(SECRET_HANDLE, token, (uint64_t)NOW, 1, &accepted, NULL) != RAMPART_OK) abort();
    sink += accepted;
}

static void oath_body(const char *token) {
    sink += oath_totp_validate(SECRET_BYTES, 20, NOW, 30, 0, 1, token);
}

/* One round: nanoseconds per call over ITERATIONS calls. */
static double round_ns(body_fn body, const char *token) {
    double start = seconds();
    for (int i = 0; i < ITERATIONS; i++) body(token);
    return (seconds() - start) / ITERATIONS * 1e9;
}

#define CASES 6

/* Rounds interleave the cases, so a noisy moment on a shared machine hits all of them alike;
 * each case reports its median round. */
static void measure_all(const body_fn *bodies, const char *const *tokens, double *median) {
    static double per_call[CASES][ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        for (int c = 0; c < CASES; c++) per_call[c][r] = round_ns(bodies[c], tokens[c]);
    for (int c = 0; c < CASES; c++) {
        qsort(per_call[c], ROUNDS, sizeof per_call[c][0], cmp);
        median[c] = per_call[c][ROUNDS / 2];
    }
}

int main(void) {
    if (oath_init() != OATH_OK) return 1;
    char *valid = NULL;
    if (rampart_totp_code_at(SECRET_BASE32, (uint64_t)NOW, &valid) != RAMPART_OK) return 1;
    if (rampart_totp_secret_from_base32(SECRET_BASE32, &SECRET_HANDLE) != RAMPART_OK) return 1;
    const char *invalid = strcmp(valid, "000000") == 0 ? "111111" : "000000";

    /* both agree on the answers before anything is timed */
    bool accepted = false;
    rampart_totp_verify(SECRET_BASE32, valid, (uint64_t)NOW, 1, &accepted, NULL);
    if (!accepted || oath_totp_validate(SECRET_BYTES, 20, NOW, 30, 0, 1, valid) < 0) return 1;
    rampart_totp_verify(SECRET_BASE32, invalid, (uint64_t)NOW, 1, &accepted, NULL);
    if (accepted || oath_totp_validate(SECRET_BYTES, 20, NOW, 30, 0, 1, invalid) >= 0) return 1;
    rampart_totp_verify_secret(SECRET_HANDLE, valid, (uint64_t)NOW, 1, &accepted, NULL);
    if (!accepted) return 1;
    rampart_totp_verify_secret(SECRET_HANDLE, invalid, (uint64_t)NOW, 1, &accepted, NULL);
    if (accepted) return 1;

    const body_fn bodies[CASES] = {rampart_body, rampart_body, rampart_secret_body,
                                   rampart_secret_body, oath_body, oath_body};
    const char *const tokens[CASES] = {valid, invalid, valid, invalid, valid, invalid};
    double ns[CASES];
    measure_all(bodies, tokens, ns);
    printf("verify, window 1, median of %d interleaved rounds of %d calls (ns per call)\n", ROUNDS, ITERATIONS);
    printf("  rampart_totp_verify (C ABI)   valid %7.0f   invalid %7.0f\n", ns[0], ns[1]);
    printf("  rampart_totp_verify_secret    valid %7.0f   invalid %7.0f\n", ns[2], ns[3]);
    printf("  liboath oath_totp_validate    valid %7.0f   invalid %7.0f\n", ns[4], ns[5]);
    printf("  ratio liboath / verify_secret valid %7.2f   invalid %7.2f\n", ns[4] / ns[2], ns[5] / ns[3]);
    rampart_string_free(valid);
    rampart_totp_secret_free(SECRET_HANDLE);
    oath_done();
    return 0;
}
