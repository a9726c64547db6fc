/* Eight pthreads share one service handle (SQLite file, system clock): each runs the lifecycle
 * for its own contacts while the others do the same, the per-thread last error stays per
 * thread, and when all eight submit the same valid code for one contact at once, exactly one
 * is accepted. */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

#define THREADS 8
#define ROUNDS 3

static rampart_service *service;
static char *partner;
static char *shared_secret;
static char shared_code[7];
static pthread_barrier_t barrier;
static int accepted_count;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *SHARED_CONTACT = "5c0ffee0-0000-4000-8000-000000000000";

static uint64_t unix_now(void) {
    return (uint64_t)time(NULL);
}

static void *worker(void *arg) {
    unsigned id = (unsigned)(size_t)arg % 1000000u;
    char message[128];

    /* first, all threads at once with the same valid code (while it is fresh) */
    pthread_barrier_wait(&barrier);
    bool won = false;
    OK(rampart_service_verify_2fa(service, partner, SHARED_CONTACT, shared_code, NULL, &won, NULL, NULL));
    if (won) {
        pthread_mutex_lock(&count_lock);
        accepted_count++;
        pthread_mutex_unlock(&count_lock);
    }

    for (unsigned round = 0; round < ROUNDS; round++) {
        char contact[64];
        snprintf(contact, sizeof contact, "00000000-0000-4000-8000-%06u%06u", id, round);
        char *qr = NULL, *secret = NULL;
        OK(rampart_service_create_2fa(service, partner, contact, NULL, NULL, &qr, &secret, NULL));
        rampart_string_free(qr);
        char *code = code_at(secret, unix_now());
        OK(rampart_service_enable_2fa(service, partner, contact, code, NULL));
        bool enabled = false, accepted = true;
        OK(rampart_service_status_2fa(service, partner, contact, &enabled));
        assert(enabled);
        OK(rampart_service_verify_2fa(service, partner, contact, code, NULL, &accepted, NULL, NULL));
        assert(!accepted); /* used up by enable */

        /* this thread's failure, read back while the other threads keep calling */
        EXPECT(RAMPART_STATUS_CONTACT_ID_INVALID, rampart_service_status_2fa(service, partner, "x", &enabled));
        for (int i = 0; i < 5; i++) OK(rampart_service_status_2fa(service, partner, contact, &enabled));
        EXPECT(RAMPART_STATUS_ALREADY_ENABLED,
               rampart_service_enable_2fa(service, partner, SHARED_CONTACT, NULL, NULL));
        rampart_last_error_message(message, sizeof message);
        assert(strcmp(message, "Cannot enable 2FA again, it is already set") == 0);
        rampart_string_free(code);
        rampart_string_free(secret);
    }

    return NULL;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    char db[512];
    snprintf(db, sizeof db, "%s/threads.db", dir);
    uint8_t key[32];
    memset(key, 7, sizeof key);
    rampart_config config = rampart_config_default();
    config.master_key = key;
    config.master_key_len = sizeof key;
    OK(rampart_service_open(db, &config, &service));
    char *sk = NULL, *pk = NULL;
    OK(rampart_service_create_partner(service, "Threads", RAMPART_ENVIRONMENT_SANDBOX, &partner, &sk, &pk));

    /* the shared contact: enabled with the previous step's code, so the current step's code is
     * fresh for the race (both are inside the window of one step either side) */
    char *qr = NULL;
    OK(rampart_service_create_2fa(service, partner, SHARED_CONTACT, NULL, NULL, &qr, &shared_secret, NULL));
    if (unix_now() % 30 > 25) sleep(30 - (unsigned)(unix_now() % 30)); /* not at a step's edge */
    char *previous = code_at(shared_secret, unix_now() - 30);
    OK(rampart_service_enable_2fa(service, partner, SHARED_CONTACT, previous, NULL));
    char *current = code_at(shared_secret, unix_now());
    memcpy(shared_code, current, 7);

    pthread_t threads[THREADS];
    assert(pthread_barrier_init(&barrier, NULL, THREADS) == 0);
    for (size_t i = 0; i < THREADS; i++) assert(pthread_create(&threads[i], NULL, worker, (void *)i) == 0);
    for (size_t i = 0; i < THREADS; i++) assert(pthread_join(threads[i], NULL) == 0);
    pthread_barrier_destroy(&barrier);
    assert(accepted_count == 1);

    char *strings[] = {sk, pk, qr, previous, current, shared_secret, partner};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) rampart_string_free(strings[i]);
    rampart_service_free(service);
    char side[600];
    unlink(db);
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
    printf("test_threads: %d threads x %d lifecycles on one handle, 1 of %d concurrent same-code verifies accepted\n",
           THREADS, ROUNDS, THREADS);
    return 0;
}
