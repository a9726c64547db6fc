// `new Service('postgres://...', { masterKey })`: a PostgreSQL store shared by several services
// (SPEC section 7). Needs the PostgreSQL RAMPART_TEST_DATABASE_URL names (`make node-test` starts
// one with scripts/with-postgres.sh); without it these tests fail rather than skip. Each test
// works in a schema of its own, made with psql.
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { execFileSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const util = require('node:util')

const { rampart, START, code, isRampartError, assertChain } = require('./helpers')

const KEY = Buffer.from(Array.from({ length: 32 }, (_, i) => i))
const PASSWORD = 'Pg-s3cret-9d1f' // trust authentication ignores it; it must never be shown
const NEEDS_KEY =
  'a PostgreSQL database needs masterKey: every service sharing it must seal and open secrets with the same key'

function baseUrl() {
  const url = process.env.RAMPART_TEST_DATABASE_URL
  assert.ok(url, 'RAMPART_TEST_DATABASE_URL is not set: run `make node-test` (scripts/with-postgres.sh starts a PostgreSQL)')
  return url
}

function psql() {
  const bin = process.env.RAMPART_TEST_PG_BIN
  return bin && fs.existsSync(path.join(bin, 'psql')) ? path.join(bin, 'psql') : 'psql'
}

// A URL whose connections see only a new, empty schema (`options=-c%20search_path%3Dt_...`).
function freshUrl() {
  const base = baseUrl()
  const schema = `t_${crypto.randomUUID().replaceAll('-', '')}`
  execFileSync(psql(), ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', base, '-c', `CREATE SCHEMA ${schema}`], { stdio: 'inherit' })
  const url = new URL(base)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return url.href.replaceAll('+', '%20') // URLSearchParams writes a space as '+', which libpq reads as '+'
}

function withPassword(text) {
  const url = new URL(text)
  url.password = PASSWORD
  return url.href
}

// A port on 127.0.0.1 that nothing listens on.
async function closedPort() {
  const server = net.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

function opened(url, options, clock) {
  return new rampart.Service(url, { masterKey: KEY, ...options }, clock)
}

test('two services on one database share partners, codes and keys', async () => {
  const url = freshUrl()
  const clock = new rampart.ManualClock(START)
  const a = opened(url, {}, clock)
  const b = opened(url.replace('postgres://', 'postgresql://'), {}, clock) // both schemes are accepted
  assert.equal(a.path, null)
  assert.equal(b.path, null)

  const credentials = await a.createPartner('Acme')
  const partner = credentials.partnerId
  assert.equal((await b.partner(partner)).name, 'Acme')
  assert.equal(await b.partnerCount(), 1)

  const contact = crypto.randomUUID()
  const setup = await a.create2fa(partner, contact)
  await a.enable2fa(partner, contact, code(setup.manual, clock.now))
  assert.equal(await b.status2fa(partner, contact), true)
  clock.advance(30)
  const now = code(setup.manual, clock.now)
  assert.equal((await a.verify2fa(partner, contact, now)).method, 'token')
  // Used up everywhere: replayed through either service, the code is refused.
  assert.equal(await b.verify2fa(partner, contact, now), false)
  assert.equal(await a.verify2fa(partner, contact, now), false)

  // The same fresh code sent 16 times at once through both services (libuv pool threads): one success.
  clock.advance(30)
  const next = code(setup.manual, clock.now)
  const results = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 ? a : b).verify2fa(partner, contact, next)))
  assert.equal(results.filter(Boolean).length, 1)

  // Keys rotated through one service are the keys the other accepts.
  assert.equal((await b.authenticate(credentials.secretKey)).partnerId, partner)
  const rotated = await a.rotateKeys(partner, 'ops@example.com')
  await assert.rejects(b.authenticate(credentials.secretKey), (err) => err.code === 'unauthorized' && err.status === 401)
  assert.equal((await b.authenticate(rotated.secretKey)).partnerId, partner)
  // One chain in the shared database, the same through either service, and intact.
  const chain = await a.auditEvents(partner)
  assert.deepEqual(await b.auditEvents(partner), chain)
  assert.deepEqual(
    chain.events.map((r) => [r.actor, r.event]),
    [
      ['partner', '2fa.created'],
      ['partner', '2fa.enabled'],
      ['partner', 'recovery_codes.issued'],
      ['operator:ops@example.com', 'partner.keys_rotated'],
    ],
  )
  assertChain(chain.events)
  assert.deepEqual(await b.verifyAudit(partner), [{ partnerId: partner, rows: 4, firstBadSeq: null }])
  a.close()
  b.close()

  // A service opened later sees all of it; disabling through it is seen by a fresh one.
  clock.advance(30)
  const c = opened(url, {}, clock)
  assert.equal(await c.status2fa(partner, contact), true)
  await c.disable2fa(partner, contact, code(setup.manual, clock.now))
  c.close()
  const d = opened(url, {}, clock)
  assert.equal(await d.status2fa(partner, contact), false)
  d.close()
  await assert.rejects(d.ping(), (err) => err.code === 'config')
})

test('another master key is refused at open', async () => {
  const url = freshUrl()
  const a = opened(url)
  const { partnerId } = await a.createPartner('Acme')
  await a.create2fa(partnerId, crypto.randomUUID())
  a.close()
  assert.throws(() => opened(url, { masterKey: Buffer.alloc(32) }), (err) => err.code === 'config')
})

test('a URL needs masterKey', () => {
  const url = freshUrl()
  for (const options of [undefined, {}, { environment: 'production' }, { masterKeyId: 3 }]) {
    assert.throws(() => new rampart.Service(url, options), (err) => isRampartError(err, 'config', 500, NEEDS_KEY))
  }
})

test('the password is never shown', async () => {
  const url = withPassword(freshUrl())
  const service = opened(url)
  await service.createPartner('Acme')
  const shown = [util.inspect(service, { showHidden: true, depth: 5 }), String(service.path), JSON.stringify(service)]
  service.close()
  // libpq's other place for it: the query.
  const inQuery = new URL(freshUrl())
  inQuery.searchParams.set('password', PASSWORD)
  const other = opened(inQuery.href.replaceAll('+', '%20'))
  await other.ping()
  shown.push(util.inspect(other, { showHidden: true, depth: 5 }), String(other.path))
  other.close()
  const errors = []
  try {
    new rampart.Service(url)
  } catch (err) {
    errors.push(err)
  }
  try {
    new rampart.Service(withPassword(`postgres://postgres@127.0.0.1:${await closedPort()}/postgres?sslmode=disable`), { masterKey: KEY })
  } catch (err) {
    errors.push(err)
  }
  assert.deepEqual(errors.map((e) => e.code), ['config', 'internal'])
  for (const err of errors) {
    shown.push(String(err), err.stack, util.inspect(err, { showHidden: true }), JSON.stringify(err))
  }
  for (const text of shown) {
    assert.ok(!text.includes(PASSWORD), text)
  }
})

test('an unreachable database throws the store failure', async () => {
  const url = `postgres://postgres@127.0.0.1:${await closedPort()}/postgres?sslmode=disable`
  const started = Date.now()
  assert.throws(() => opened(url), (err) => isRampartError(err, 'internal', 500, 'Internal server error'))
  assert.ok(Date.now() - started < 30_000)
})

test('a TCP host without sslmode=disable needs TLS that verifies', () => {
  // The test cluster's certificate comes from a CA of its own, which the system does not trust.
  const url = new URL(freshUrl())
  url.searchParams.delete('sslmode')
  assert.throws(() => opened(url.href.replaceAll('+', '%20')), (err) => err.code === 'internal')
})
