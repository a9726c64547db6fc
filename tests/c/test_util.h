/* Helpers shared by the C test programs: plain assert, a status check that says what it got,
 * and a clock the tests move by hand. */
#ifndef RAMPART_TEST_UTIL_H
#define RAMPART_TEST_UTIL_H

#undef NDEBUG /* the checks are the test: never compile them out */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart.h"

/* Run `call`, and if its status is not `want` print both (names and the last error) first. */
#define EXPECT(want, call)                                                                      \
    do {                                                                                        \
        rampart_status got_ = (call);                                                           \
        if (got_ != (rampart_status)(want)) {                                                   \
            char msg_[256];                                                                     \
            rampart_last_error_message(msg_, sizeof msg_);                                      \
            fprintf(stderr, "%s:%d: %s\n  want %s, got %s (%s)\n", __FILE__, __LINE__, #call,   \
                    rampart_status_name((uint32_t)(want)), rampart_status_name((uint32_t)got_), \
                    msg_);                                                                      \
        }                                                                                       \
        assert(got_ == (rampart_status)(want));                                                 \
    } while (0)

#define OK(call) EXPECT(RAMPART_OK, call)

/* The last error message of this thread, in a static buffer (tests are careful with it). */
static inline const char *last_message(void) {
    static char buf[512];
    size_t n = rampart_last_error_message(buf, sizeof buf);
    assert(n < sizeof buf);
    return buf;
}

static inline int starts_with(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A clock the test sets: `context` points to the current Unix time. */
static inline uint64_t manual_clock(void *context) {
    return *(const uint64_t *)context;
}

/* The code a user's app shows for `secret` at `t` (a library string: the caller frees it). */
static inline char *code_at(const char *secret, uint64_t t) {
    char *code = NULL;
    OK(rampart_totp_code_at(secret, t, &code));
    assert(code != NULL && strlen(code) == 6);
    return code;
}

#endif
