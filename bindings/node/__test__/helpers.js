// Shared setup: a service on a manual clock, a partner, a contact, and codes computed by
// otplib (an independent implementation).
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

module.exports = { rampart, START, code, setup, enabled, rejects, throws, isRampartError, wrong, loadVectors, VECTORS }
