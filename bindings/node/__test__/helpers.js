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

// The promise rejects with an Error carrying exactly this code, kind and message.
async function rejects(promise, code_, kind, message) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof Error, 'an Error instance')
    assert.deepEqual({ code: err.code, kind: err.kind, message: err.message }, { code: code_, kind, message })
    return true
  })
}

function wrong(right) {
  return right === '000000' ? '000001' : '000000'
}

module.exports = { rampart, START, code, setup, enabled, rejects, wrong, loadVectors, VECTORS }
