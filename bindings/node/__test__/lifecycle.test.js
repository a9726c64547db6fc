// Every row of SPEC section 2's lifecycle table, with its exact message and code.
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')

const { rampart, code, setup, enabled, rejects, wrong } = require('./helpers')

test('create when disabled returns the setup and replaces a pending secret', async () => {
  const t = await setup()
  const s = await t.service.create2fa(t.partner, t.contact)
  assert.match(s.qrCode, /^data:image\/png;base64,/)
  assert.equal(s.manual.length, 32)
  assert.ok(s.uri.startsWith(`otpauth://totp/Rampart2FA:${t.contact}?secret=${s.manual}&issuer=Rampart2FA`))
  const again = await t.service.create2fa(t.partner, t.contact, 'Acme Shop', 'ada@example.com')
  assert.notEqual(again.manual, s.manual)
  assert.ok(again.uri.startsWith('otpauth://totp/Acme%20Shop:ada%40example.com?'))
  assert.equal(await t.service.status2fa(t.partner, t.contact), false)
})

test('create when enabled is 403', async () => {
  const t = await setup()
  await enabled(t)
  await rejects(t.service.create2fa(t.partner, t.contact), 'must_disable_first', 403, 'Must disable 2FA before creating a new one')
})

test('enable with a missing token is 401 token_missing', async () => {
  for (const token of [null, undefined, '', '   ', '\t\n']) {
    const t = await setup()
    await t.service.create2fa(t.partner, t.contact)
    await rejects(t.service.enable2fa(t.partner, t.contact, token), 'token_missing', 401, 'Google 2FA requires the token to be passed in')
  }
})

test('enable without create is 409', async () => {
  const t = await setup()
  await rejects(t.service.enable2fa(t.partner, t.contact, '123456'), 'not_created', 409, 'Must create 2FA before enabling it')
})

test('enable after the pending secret expired is 409', async () => {
  const t = await setup()
  const s = await t.service.create2fa(t.partner, t.contact)
  t.clock.advance(600)
  await rejects(t.service.enable2fa(t.partner, t.contact, code(s.manual, t.clock.now)), 'not_created', 409, 'Must create 2FA before enabling it')
})

test('enable with a token that does not verify is 401 token_failed', async () => {
  const tokens = ['000000', 12.5, true, [1], { a: 1 }, '+12345', '１２３４５６', '12345', '1234567', -1, 1e6, NaN]
  for (let token of tokens) {
    const t = await setup()
    const s = await t.service.create2fa(t.partner, t.contact)
    const right = code(s.manual, t.clock.now)
    if (token === right) token = wrong(right)
    await rejects(t.service.enable2fa(t.partner, t.contact, token), 'token_failed', 401, 'Google 2FA failed')
    assert.equal(await t.service.status2fa(t.partner, t.contact), false)
  }
})

test('enable succeeds with every accepted token form', async () => {
  for (const form of ['plain', 'spaced', 'hyphen', 'int', 'padded']) {
    const t = await setup()
    const s = await t.service.create2fa(t.partner, t.contact)
    const c = code(s.manual, t.clock.now)
    const token = { plain: c, spaced: `${c.slice(0, 3)} ${c.slice(3)}`, hyphen: `${c.slice(0, 3)}-${c.slice(3)}`, int: Number(c), padded: ` ${c}\n` }[form]
    assert.equal((await t.service.enable2fa(t.partner, t.contact, token)).length, 10)
    assert.equal(await t.service.status2fa(t.partner, t.contact), true)
  }
})

test('enable accepts the neighbouring steps only', async () => {
  const t = await setup()
  const s = await t.service.create2fa(t.partner, t.contact)
  await rejects(t.service.enable2fa(t.partner, t.contact, code(s.manual, t.clock.now - 60)), 'token_failed', 401, 'Google 2FA failed')
  await t.service.enable2fa(t.partner, t.contact, code(s.manual, t.clock.now - 30))
})

test('enable when enabled is 409 whatever the token', async () => {
  const t = await setup()
  const manual = await enabled(t)
  for (const token of [code(manual, t.clock.now), '000000', null]) {
    await rejects(t.service.enable2fa(t.partner, t.contact, token), 'already_enabled', 409, 'Cannot enable 2FA again, it is already set')
  }
})

test('disable with a missing token is 401 and stays enabled', async () => {
  const t = await setup()
  await enabled(t)
  await rejects(t.service.disable2fa(t.partner, t.contact, null), 'token_missing', 401, 'Google 2FA requires the token to be passed in')
  assert.equal(await t.service.status2fa(t.partner, t.contact), true)
})

test('disable with a wrong token is 401 and stays enabled', async () => {
  const t = await setup()
  const manual = await enabled(t)
  await rejects(t.service.disable2fa(t.partner, t.contact, wrong(code(manual, t.clock.now))), 'token_failed', 401, 'Google 2FA failed')
  assert.equal(await t.service.status2fa(t.partner, t.contact), true)
})

test('disable succeeds and erases the secret', async () => {
  const t = await setup()
  const manual = await enabled(t)
  assert.equal(await t.service.disable2fa(t.partner, t.contact, code(manual, t.clock.now)), undefined)
  assert.equal(await t.service.status2fa(t.partner, t.contact), false)
  await rejects(t.service.enable2fa(t.partner, t.contact, code(manual, t.clock.now + 30)), 'not_created', 409, 'Must create 2FA before enabling it')
})

test('the enabling code cannot disable', async () => {
  const t = await setup()
  const s = await t.service.create2fa(t.partner, t.contact)
  const c = code(s.manual, t.clock.now)
  await t.service.enable2fa(t.partner, t.contact, c)
  await rejects(t.service.disable2fa(t.partner, t.contact, c), 'token_failed', 401, 'Google 2FA failed')
})

test('disable when disabled is 409', async () => {
  const t = await setup()
  for (const token of ['123456', null]) {
    await rejects(t.service.disable2fa(t.partner, t.contact, token), 'not_enabled', 409, '2FA is not enabled')
  }
})

test('status follows the state', async () => {
  const t = await setup()
  assert.equal(await t.service.status2fa(t.partner, t.contact), false)
  await enabled(t)
  assert.equal(await t.service.status2fa(t.partner, t.contact), true)
})

test('verify is an outcome: wrong, malformed and replayed codes resolve false', async () => {
  const t = await setup()
  const manual = await enabled(t)
  const c = code(manual, t.clock.now)
  assert.equal(await t.service.verify2fa(t.partner, t.contact, wrong(c)), false)
  assert.equal(await t.service.verify2fa(t.partner, t.contact, 'junk'), false)
  assert.equal((await t.service.verify2fa(t.partner, t.contact, c)).method, 'token')
  assert.equal(await t.service.verify2fa(t.partner, t.contact, c), false)
  await rejects(t.service.verify2fa(t.partner, t.contact, null), 'token_missing', 401, 'Google 2FA requires the token to be passed in')
})

test('verify when disabled is 409', async () => {
  const t = await setup()
  await rejects(t.service.verify2fa(t.partner, t.contact, '123456'), 'not_enabled', 409, '2FA is not enabled')
})

test('throttling: 429 with retryAfter, refused unevaluated, success resets', async () => {
  const t = await setup()
  const manual = await enabled(t)
  const right = code(manual, t.clock.now)
  for (let i = 0; i < 5; i++) assert.equal(await t.service.verify2fa(t.partner, t.contact, wrong(right)), false)
  await assert.rejects(t.service.verify2fa(t.partner, t.contact, right), (err) => {
    assert.ok(err instanceof rampart.RampartError)
    assert.deepEqual(
      { code: err.code, status: err.status, message: err.message, retryAfter: err.retryAfter },
      { code: 'throttled', status: 429, message: 'Too many failed 2FA attempts, try again in 30 seconds', retryAfter: 30 },
    )
    return true
  })
  await rejects(t.service.disable2fa(t.partner, t.contact, wrong(right)), 'throttled', 429, 'Too many failed 2FA attempts, try again in 30 seconds')
  t.clock.advance(30)
  assert.equal((await t.service.verify2fa(t.partner, t.contact, code(manual, t.clock.now))).method, 'token')
})

test('locked after 100 failures until an operator reset', async () => {
  const t = await setup()
  const manual = await enabled(t)
  for (let i = 0; i < 100; i++) {
    assert.equal(await t.service.verify2fa(t.partner, t.contact, 'junk'), false)
    t.clock.advance(3600)
  }
  await rejects(t.service.verify2fa(t.partner, t.contact, code(manual, t.clock.now)), 'locked', 423, '2FA is locked after too many failed attempts')
  await t.service.resetLock(t.partner, t.contact, 'ops')
  assert.equal((await t.service.verify2fa(t.partner, t.contact, code(manual, t.clock.now))).method, 'token')
  // The partner's own create and enable, the lock at the 100th failure, the operator's reset.
  const { events } = await t.service.auditEvents(t.partner)
  assert.deepEqual(
    events.map((r) => [r.actor, r.event, r.contactId, r.details]),
    [
      ['partner', '2fa.created', t.contact, {}],
      ['partner', '2fa.enabled', t.contact, {}],
      ['partner', 'recovery_codes.issued', t.contact, { reason: 'enable' }],
      ['partner', '2fa.locked', t.contact, { failures: 100 }],
      ['operator:ops', '2fa.unlocked', t.contact, { failures: 100 }],
    ],
  )
})

test('contacts are scoped to their partner', async () => {
  const t = await setup()
  await enabled(t)
  const other = (await t.service.createPartner('Other')).partnerId
  assert.equal(await t.service.status2fa(other, t.contact), false)
})

test('KYC rule, waiver and purchase check', async () => {
  const t = await setup()
  const { service, partner, contact } = t
  assert.equal(await service.is2faRequired(partner, contact), false)
  await service.setKycPassed(partner, contact, true, 'ops')
  assert.equal(await service.is2faRequired(partner, contact), true)
  assert.equal(await service.mayPurchase(partner, contact), false)
  assert.deepEqual(await service.contactsRequiring2fa(partner), [contact])
  await enabled(t)
  assert.equal(await service.mayPurchase(partner, contact), true)
  assert.deepEqual(await service.contactsRequiring2fa(partner), [])
  const other = crypto.randomUUID()
  await service.setKycPassed(partner, other, true, 'ops')
  await service.set2faWaiver(partner, true, 'ops')
  assert.equal(await service.mayPurchase(partner, other), true)
  assert.equal((await service.partner(partner)).twoFactorWaived, true)
})

test('a SQLite file service keeps state across reopen', async (ctx) => {
  const os = require('node:os')
  const path = require('node:path')
  const fs = require('node:fs')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rampart-node-'))
  ctx.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const db = path.join(dir, 'r.db')
  const a = new rampart.Service(db)
  assert.equal(a.path, db)
  const p = (await a.createPartner('Acme')).partnerId
  const contact = crypto.randomUUID()
  const s = await a.create2fa(p, contact)
  await a.enable2fa(p, contact, code(s.manual, Math.floor(Date.now() / 1000)))
  a.close()
  assert.equal(a.closed, true)
  await rejects(a.status2fa(p, contact), 'config', 500, 'the service is closed')
  const b = new rampart.Service(db)
  assert.equal(await b.status2fa(p, contact), true)
  b.close()
})

test('rewrapSecrets moves every secret to the newest key of the key file', async (ctx) => {
  const os = require('node:os')
  const path = require('node:path')
  const fs = require('node:fs')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rampart-node-'))
  ctx.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const db = path.join(dir, 'r.db')
  const keyFile = `${db}.key` // generated beside the database on first open
  const clock = new rampart.ManualClock(1_700_000_000)
  const a = new rampart.Service(db, null, clock)
  const p = (await a.createPartner('Acme')).partnerId
  const contact = crypto.randomUUID()
  const manual = await enabled({ service: a, partner: p, contact, clock })
  a.close()
  const newKey = `9:${'ab'.repeat(32)}`
  fs.writeFileSync(keyFile, `${fs.readFileSync(keyFile, 'utf8').trim()}\n${newKey}\n`)
  const b = new rampart.Service(db, null, clock)
  assert.deepEqual(await b.rewrapSecrets('ops'), { keyId: 9, examined: 1, rewrapped: 1, unopenable: 0 })
  assert.deepEqual(await b.rewrapSecrets('ops'), { keyId: 9, examined: 1, rewrapped: 0, unopenable: 0 })
  // One row for the partner whose secret moved; the second run changed nothing.
  assert.deepEqual(
    (await b.auditEvents(p)).events.map((r) => [r.actor, r.event, r.contactId, r.details]),
    [
      ['partner', '2fa.created', contact, {}],
      ['partner', '2fa.enabled', contact, {}],
      ['partner', 'recovery_codes.issued', contact, { reason: 'enable' }],
      ['operator:ops', 'keys.rewrapped', null, { keyId: 9 }],
    ],
  )
  await rejects(b.rewrapSecrets(''), 'invalid_input', 400, 'operator must name who acts, without control characters')
  await rejects(b.rewrapSecrets(42), 'invalid_input', 400, 'operator must be a string')
  b.close()
  fs.writeFileSync(keyFile, `${newKey}\n`) // the old key removed
  const c = new rampart.Service(db, null, clock)
  assert.equal((await c.verify2fa(p, contact, code(manual, clock.now))).method, 'token')
  c.close()
})
