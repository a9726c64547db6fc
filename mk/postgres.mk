# The PostgreSQL store (SPEC section 7) against a real PostgreSQL: scripts/with-postgres.sh
# starts a throwaway cluster (or uses RAMPART_TEST_DATABASE_URL when set) and runs the store
# conformance and checkout suites' postgres cases, plus the store's own tests (migrations,
# several stores racing on one database, drop on an async thread), each in schemas of its own;
# then rampart-server processes on one database (one success per code, key rotation) and under
# faults (exact counts across processes, operator reset, kill -9, SIGSTOP holding a row lock,
# terminated connections, five servers migrating at once, the database down at start and
# mid-run), and TLS to the cluster's own CA.
#
#   make pg-test                                           what `make test` runs
#   RAMPART_TEST_DATABASE_URL=postgres://... make pg-test  against a database of yours

.PHONY: pg-test

pg-test:
	scripts/with-postgres.sh sh -c '$(CARGO) test -p rampart-core --features postgres-tests --locked \
	  --lib --test conformance --test checkout --test audit --test recovery --test webhooks -- postgres:: && \
	  $(CARGO) test -p rampart-core --features postgres-tests --locked --test postgres && \
	  $(CARGO) test -p rampart-server --locked --features postgres-tests --test postgres --test postgres_faults --test postgres_outage'

# The store's throughput beside its floor (pgbench running update_contact's SQL on the same
# database), and the server on PostgreSQL beside the server on SQLite, one and two instances:
# a benchmark, never part of `make test`; results in docs/BENCHMARKS.md. A quick look:
# `CONTACTS=20000 REAL_CONTACTS=500 DURATION=3s make pg-bench`.
.PHONY: pg-bench

pg-bench:
	scripts/pg-bench.sh
