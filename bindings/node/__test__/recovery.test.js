// Recovery (SPEC section 8) through the binding: enable's 10 codes, verify and disable by
// `{ recoveryCode }`, both factors refused, regenerate, the lock that spares recovery codes, the
// purchase hold, the operator's four-eyes reset and the support view; codes in no other value.
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const util = require('node:util')

const { rampart, code, setup, rejects } = require('./helpers')

const CODE = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$/ // Crockford base32, six groups
const CONFLICT = ['factor_conflict', 400, 'Give token or recoveryCode, not both']
const FAILED = ['token_failed', 401, 'Google 2FA failed']
const HOLD = 86_400

// 2FA enabled for the contact: its manual key and recovery codes; the enabling step is used up.
async function enabled({ service, partner, contact, clock }) {
  const s = await service.create2fa(partner, contact)
  const codes = await service.enable2fa(partner, contact, code(s.manual, clock.now))
  clock.advance(30)
  return { manual: s.manual, codes }
}

test('enable resolves to 10 well-formed codes, shown once', async () => {
  const t = await setup()
  assert.equal(await t.service.recoveryCodesRemaining(t.partner, t.contact), 0)
  const { codes } = await enabled(t)
  assert.ok(Array.isArray(codes))
  assert.equal(codes.length, 10)
  assert.equal(new Set(codes).size, 10)
  for (const c of codes) assert.match(c, CODE)
  assert.equal(await t.service.recoveryCodesRemaining(t.partner, t.contact), 10)
  assert.equal((await t.service.contactState(t.partner, t.contact)).recoveryCodesRemaining, 10)
})

test('verify by recovery code: accepted once, then false', async () => {
  const t = await setup()
  const { manual, codes } = await enabled(t)
  const typed = ` ${codes[0].toLowerCase().replaceAll('-', ' ')}\n` // case, spaces and hyphens do not matter
  assert.deepEqual(await t.service.verify2fa(t.partner, t.contact, { recoveryCode: typed }), {
    method: 'recoveryCode',
    recoveryCodesRemaining: 9,
  })
  assert.equal(await t.service.status2fa(t.partner, t.contact), true) // 2FA stays on
  // used up: an outcome (false), not a rejection, and audited as a leaked sheet
  assert.equal(await t.service.verify2fa(t.partner, t.contact, { recoveryCode: codes[0] }), false)
  assert.equal(await t.service.verify2fa(t.partner, t.contact, { token: null, recoveryCode: codes[0] }), false)
  const events = (await t.service.auditEvents(t.partner, t.contact)).events.map((r) => r.event)
  assert.deepEqual(events.slice(-3), ['recovery_code.used', 'recovery_code.reused', 'recovery_code.reused'])
  // wrong, malformed, not a string, not valid Unicode: false alike
  for (const bad of ['0000-0000-0000-0000-0000-0000', codes[1].slice(0, -1), 12345, ['x'], '\ud800']) {
    assert.equal(await t.service.verify2fa(t.partner, t.contact, { recoveryCode: bad }), false, String(bad))
  }
  // an authenticator code, bare or as { token }, says so, with the same count
  const now = code(manual, t.clock.now)
  assert.deepEqual(await t.service.verify2fa(t.partner, t.contact, now), { method: 'token', recoveryCodesRemaining: 9 })
  t.clock.advance(30)
  const next = { token: code(manual, t.clock.now) }
  assert.deepEqual(await t.service.verify2fa(t.partner, t.contact, next), { method: 'token', recoveryCodesRemaining: 9 })
  // the old truthiness holds: a rejected code never passes an `if`
  let passed = 0
  for (const factor of ['junk', next, { recoveryCode: codes[0] }, { recoveryCode: codes[2] }]) {
    if (await t.service.verify2fa(t.partner, t.contact, factor)) passed++
  }
  assert.equal(passed, 1)
})

test('both factors reject with factor_conflict, before anything is evaluated', async () => {
  const t = await setup()
  const { manual, codes } = await enabled(t)
  const token = code(manual, t.clock.now)
  await rejects(t.service.verify2fa(t.partner, t.contact, { token, recoveryCode: codes[0] }), ...CONFLICT)
  await rejects(t.service.verify2fa(t.partner, t.contact, { token: 123456, recoveryCode: 7 }), ...CONFLICT)
  await rejects(t.service.disable2fa(t.partner, t.contact, { token, recoveryCode: codes[0] }), ...CONFLICT)
  await rejects(t.service.disable2fa(t.partner, t.contact, { token: 'junk', recoveryCode: '\ud800' }), ...CONFLICT)
  assert.equal(await t.service.recoveryCodesRemaining(t.partner, t.contact), 10)
  // blank is not given; neither given is a missing token
  assert.equal((await t.service.verify2fa(t.partner, t.contact, { token, recoveryCode: '  ' })).method, 'token')
  const missing = ['token_missing', 401, 'Google 2FA requires the token to be passed in']
  await rejects(t.service.verify2fa(t.partner, t.contact, { recoveryCode: ' \t' }), ...missing)
  await rejects(t.service.verify2fa(t.partner, t.contact, { token: undefined }), ...missing)
  // an object with neither property is still a code that does not verify
  assert.equal(await t.service.verify2fa(t.partner, t.contact, { code: codes[1] }), false)
})

test('disable by recovery code starts the purchase hold', async () => {
  const t = await setup()
  const { codes } = await enabled(t)
  assert.deepEqual(await t.service.purchaseCheck(t.partner, t.contact), { allowed: true })
  await rejects(t.service.disable2fa(t.partner, t.contact, { recoveryCode: '0000-0000-0000-0000-0000-0000' }), ...FAILED)
  assert.equal(await t.service.disable2fa(t.partner, t.contact, { recoveryCode: codes[3] }), undefined)
  assert.equal(await t.service.status2fa(t.partner, t.contact), false)
  assert.equal(await t.service.recoveryCodesRemaining(t.partner, t.contact), 0)
  assert.deepEqual(await t.service.purchaseCheck(t.partner, t.contact), {
    allowed: false,
    reason: 'purchase_hold',
    until: t.clock.now + HOLD,
  })
  assert.equal(await t.service.mayPurchase(t.partner, t.contact), false)
  await rejects(t.service.disable2fa(t.partner, t.contact, { recoveryCode: codes[4] }), 'not_enabled', 409, '2FA is not enabled')
  t.clock.advance(HOLD)
  assert.deepEqual(await t.service.purchaseCheck(t.partner, t.contact), { allowed: true })
  assert.equal((await t.service.contactState(t.partner, t.contact)).purchaseHoldUntil, undefined)
  // the KYC rule comes first
  await t.service.setKycPassed(t.partner, t.contact, true, 'ops')
  assert.deepEqual(await t.service.purchaseCheck(t.partner, t.contact), { allowed: false, reason: 'two_factor_required' })
})

test('purchaseHoldSecs', async () => {
  const t = await setup({ purchaseHoldSecs: 0 })
  const { codes } = await enabled(t)
  await t.service.disable2fa(t.partner, t.contact, { recoveryCode: codes[0] })
  assert.equal((await t.service.purchaseCheck(t.partner, t.contact)).allowed, true)
  for (const bad of [604_801, -1, 1.5, '60', true]) {
    throws(() => new rampart.Service(null, { purchaseHoldSecs: bad }))
  }
})

function throws(call) {
  assert.throws(call, (err) => {
    assert.ok(err instanceof rampart.RampartError)
    assert.deepEqual([err.code, err.status, err.message], ['invalid_input', 400, 'purchaseHoldSecs must be a whole number of seconds from 0 to 604800'])
    return true
  })
}

test('regenerate replaces the set', async () => {
  const t = await setup()
  const { manual, codes: old } = await enabled(t)
  await t.service.verify2fa(t.partner, t.contact, { recoveryCode: old[0] })
  await rejects(t.service.regenerateRecoveryCodes(t.partner, t.contact, null), 'token_missing', 401, 'Google 2FA requires the token to be passed in')
  const fresh = await t.service.regenerateRecoveryCodes(t.partner, t.contact, code(manual, t.clock.now))
  assert.equal(fresh.length, 10)
  assert.ok(fresh.every((c) => CODE.test(c) && !old.includes(c)))
  assert.equal(await t.service.recoveryCodesRemaining(t.partner, t.contact), 10)
  assert.equal(await t.service.verify2fa(t.partner, t.contact, { recoveryCode: old[1] }), false) // the old set is dead
  assert.equal((await t.service.verify2fa(t.partner, t.contact, { recoveryCode: fresh[1] })).recoveryCodesRemaining, 9)
  t.clock.advance(30)
  await t.service.disable2fa(t.partner, t.contact, code(manual, t.clock.now))
  await rejects(t.service.regenerateRecoveryCodes(t.partner, t.contact, '123456'), 'not_enabled', 409, '2FA is not enabled')
})

test('a locked contact still recovers with a code', async () => {
  const t = await setup()
  const { manual, codes } = await enabled(t)
  for (let i = 0; i < 100; i++) {
    t.clock.advance(3601)
    assert.equal(await t.service.verify2fa(t.partner, t.contact, '000000x'), false)
  }
  await rejects(t.service.verify2fa(t.partner, t.contact, code(manual, t.clock.now)), 'locked', 423, '2FA is locked after too many failed attempts')
  const state = await t.service.contactState(t.partner, t.contact)
  assert.deepEqual([state.locked, state.failures, state.recoveryFailures], [true, 100, 0])
  assert.equal((await t.service.verify2fa(t.partner, t.contact, { recoveryCode: codes[0] })).method, 'recoveryCode')
  await t.service.disable2fa(t.partner, t.contact, { recoveryCode: codes[1] }) // clears the lock
  const after = await t.service.contactState(t.partner, t.contact)
  assert.deepEqual([after.enabled, after.locked, after.failures], [false, false, 0])
})

test('wrong recovery codes have their own back-off', async () => {
  const t = await setup()
  const { manual, codes } = await enabled(t)
  for (let i = 0; i < 5; i++) {
    assert.equal(await t.service.verify2fa(t.partner, t.contact, { recoveryCode: '0000-0000-0000-0000-0000-0000' }), false)
  }
  await assert.rejects(t.service.verify2fa(t.partner, t.contact, { recoveryCode: codes[0] }), (err) => {
    assert.deepEqual([err.code, err.status, err.retryAfter], ['throttled', 429, 30])
    return true
  })
  assert.equal((await t.service.contactState(t.partner, t.contact)).recoveryFailures, 5)
  assert.equal((await t.service.verify2fa(t.partner, t.contact, code(manual, t.clock.now))).method, 'token')
})

test('reset2fa: four eyes in production, the state before, audited', async () => {
  const t = await setup()
  const live = (await t.service.createPartner('Live', 'production')).partnerId
  const { codes } = await enabled({ ...t, partner: live })
  assert.equal(codes.length, 10)
  assert.equal(await t.service.verify2fa(live, t.contact, '000000x'), false)
  const required = 'approvedBy is required in production: a second operator must approve the reset'
  for (const [approvedBy, message] of [
    [undefined, required],
    [null, required],
    ['  ', required],
    ['ops@example.com', 'approvedBy must name another operator than the one resetting'],
  ]) {
    await rejects(t.service.reset2fa(live, t.contact, 'ops@example.com', 'lost phone', approvedBy), 'invalid_input', 400, message)
  }
  await rejects(t.service.reset2fa(live, t.contact, 'ops', '', 'lead'), 'invalid_input', 400, 'reason must be 1 to 500 characters without control characters')
  await rejects(t.service.reset2fa(live, t.contact, 'ops', 42, 'lead'), 'invalid_input', 400, 'reason must be a string')
  assert.equal(await t.service.status2fa(live, t.contact), true) // nothing changed

  const before = await t.service.reset2fa(live, t.contact, 'ops@example.com', 'lost phone', 'lead@example.com')
  assert.deepEqual(before, { enabled: true, locked: false, failures: 1, recoveryFailures: 0, recoveryCodesRemaining: 10, kycPassed: false })
  assert.deepEqual(await t.service.contactState(live, t.contact), {
    enabled: false,
    locked: false,
    failures: 0,
    recoveryFailures: 0,
    recoveryCodesRemaining: 0,
    kycPassed: false,
    purchaseHoldUntil: t.clock.now + HOLD,
  })
  const [row] = (await t.service.auditEvents(live, t.contact)).events.slice(-1)
  assert.deepEqual([row.actor, row.event, row.details], ['operator:ops@example.com', '2fa.reset', { reason: 'lost phone', approvedBy: 'lead@example.com' }])
  // a sandbox partner needs no second operator; a contact without 2FA is reset (and held) too
  const other = crypto.randomUUID()
  assert.equal((await t.service.reset2fa(t.partner, other, 'ops', 'support ticket 12')).enabled, false)
  assert.equal((await t.service.contactState(t.partner, other)).purchaseHoldUntil, t.clock.now + HOLD)
  await rejects(t.service.reset2fa(crypto.randomUUID(), other, 'ops', 'x'), 'partner_not_found', 404, 'Partner not found')
  await rejects(t.service.contactState(crypto.randomUUID(), other), 'partner_not_found', 404, 'Partner not found')
})

test('codes appear in no value but the arrays that show them', async () => {
  const t = await setup()
  const { codes } = await enabled(t)
  const shown = [
    await t.service.verify2fa(t.partner, t.contact, { recoveryCode: codes[0] }),
    await t.service.verify2fa(t.partner, t.contact, { recoveryCode: codes[0] }),
    await t.service.contactState(t.partner, t.contact),
    await t.service.purchaseCheck(t.partner, t.contact),
    await t.service.reset2fa(t.partner, t.contact, 'ops', 'test'),
  ]
  for (const value of shown) {
    const text = `${util.inspect(value)} ${JSON.stringify(value)}`
    assert.ok(!codes.some((c) => text.includes(c) || text.includes(c.replaceAll('-', ''))), text)
  }
})
