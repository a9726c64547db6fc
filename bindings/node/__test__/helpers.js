// Shared setup: a service on a manual clock, a partner, a contact, and codes computed by
// otplib (an independent implementation); the audit chain rule (SPEC section 9.1) computed here,
// independently of the library.
'use strict'

const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { authenticator } = require('otplib')

const rampart = require('..')

const VECTORS = path.resolve(__dirname, '..', '..', '..', 'tests', 'vectors')
const START = 1_700_000_000 // a step boundary keeps the arithmetic obvious

function loadVectors(name) {
  return JSON.parse(fs.readFileSync(path.join(VECTORS, name), 'utf8'))
}

// The code an authenticator app shows at Unix time `at`.
function code(manual, at) {
  return authenticator.clone({ epoch: at * 1000 }).generate(manual)
}

async function setup(options) {
  const clock = new rampart.ManualClock(START)
  const service = new rampart.Service(null, options, clock)
  const partner = (await service.createPartner('Acme')).partnerId
  return { clock, service, partner, contact: crypto.randomUUID() }
}

// Enabled 2FA for the contact; the enabling step is then used up, so the clock moves on.
async function enabled({ service, partner, contact, clock }) {
  const s = await service.create2fa(partner, contact)
  await service.enable2fa(partner, contact, code(s.manual, clock.now))
  clock.advance(30)
  return s.manual
}

// `err` is a RampartError with exactly this code (the kind's name), status and message.
function isRampartError(err, code_, status, message) {
  assert.ok(err instanceof rampart.RampartError, `a RampartError, got ${err}`)
  assert.ok(err instanceof Error, 'an Error instance')
  assert.equal(err.name, 'RampartError')
  assert.deepEqual({ code: err.code, status: err.status, message: err.message }, { code: code_, status, message })
  assert.equal(err.kind, code_)
  return true
}

// The promise rejects with a RampartError carrying exactly this code, status and message.
async function rejects(promise, code_, status, message) {
  await assert.rejects(promise, (err) => isRampartError(err, code_, status, message))
}

// The call throws a RampartError carrying exactly this code, status and message.
function throws(call, code_, status, message) {
  assert.throws(call, (err) => isRampartError(err, code_, status, message))
}

function wrong(right) {
  return right === '000000' ? '000001' : '000000'
}

// `prev` of a partner's first audit row.
const GENESIS = '0'.repeat(64)

// RFC 8785 (JCS) for what an audit row holds (strings, integers, null, arrays and objects of
// them): object keys sorted by UTF-16 code units (JavaScript's default sort), at every depth;
// JSON.stringify writes no white space and ECMAScript's number and string forms, as JCS does.
function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical(value[k])]))
  }
  return value
}

// What `row.hash` must be: hex SHA-256 of the canonical JSON of exactly nine members.
function auditHash(row) {
  const { seq, id, at, partnerId, contactId, actor, event, details, prev } = row
  const members = { seq, id, at, partnerId, contactId, actor, event, details, prev }
  return crypto.createHash('sha256').update(JSON.stringify(canonical(members)), 'utf8').digest('hex')
}

// A whole chain from its start: seq 1, 2, ...; each hash recomputed; each prev the hash before.
function assertChain(rows) {
  let prev = GENESIS
  rows.forEach((row, i) => {
    assert.equal(row.seq, i + 1)
    assert.equal(row.prev, prev, `row ${row.seq}: prev`)
    assert.equal(row.hash, auditHash(row), `row ${row.seq}: hash`)
    prev = row.hash
  })
}

module.exports = {
  rampart,
  START,
  code,
  setup,
  enabled,
  rejects,
  throws,
  isRampartError,
  wrong,
  loadVectors,
  VECTORS,
  GENESIS,
  auditHash,
  assertChain,
}
