# The PostgreSQL store (SPEC section 7) against a real PostgreSQL: scripts/with-postgres.sh
# starts a throwaway cluster (or uses RAMPART_TEST_DATABASE_URL when set) and runs the store
# conformance and checkout suites' postgres cases, plus the store's own tests (migrations,
# several stores racing on one database, drop on an async thread), each in schemas of its own;
# then two rampart-server processes on one database (one success per code, key rotation).
#
#   make pg-test                                           what `make test` runs
#   RAMPART_TEST_DATABASE_URL=postgres://... make pg-test  against a database of yours

.PHONY: pg-test

pg-test:
	scripts/with-postgres.sh sh -c '$(CARGO) test -p rampart-core --features postgres-tests --locked \
	  --lib --test conformance --test checkout -- postgres:: && \
	  $(CARGO) test -p rampart-server --locked --features postgres-tests --test postgres'

