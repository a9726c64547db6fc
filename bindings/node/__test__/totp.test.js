// The pure TOTP helpers against otplib and the shared RFC and token-grammar vectors.
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { authenticator, hotp: otplibHotp } = require('otplib')

const { rampart, START, code, loadVectors, rejects } = require('./helpers')

const RFC_SECRET = Buffer.from('12345678901234567890', 'ascii')

test('RFC 4226 HOTP vectors', () => {
  const v = loadVectors('totp/rfc4226.json')
  for (const c of v.cases) assert.equal(rampart.hotp(Buffer.from(v.secret_ascii, 'ascii'), c.counter), c.code)
})

test('RFC 6238 SHA-1 vectors (6 digits)', () => {
  const v = loadVectors('totp/rfc6238.json')
  for (const c of v.cases) {
    assert.equal(rampart.codeAt(Buffer.from(v.secret_ascii, 'ascii'), c.time), c.code)
    assert.equal(rampart.verifyStep(RFC_SECRET, c.code, { unixTime: c.time, window: 0 }), c.step)
  }
})

test('token grammar vectors', () => {
  const v = loadVectors('tokens.json')
  for (const c of v.cases) {
    // JS numbers carry no integer/float distinction: JSON's 123456.0 reads as 123456 here.
    if (/float/i.test(c.note ?? '') && Number.isInteger(c.input)) continue
    const got = rampart.parseToken(c.input)
    assert.equal(got.kind, c.expect, JSON.stringify(c))
    if (c.expect === 'code') assert.equal(got.code, c.value)
  }
  assert.equal(rampart.parseToken(undefined).kind, 'missing')
  assert.equal(rampart.parseToken('1'.repeat(1 << 20)).kind, 'malformed')
})

test('new secret: 160 bits, Key URI and QR data URI', () => {
  const e = rampart.newSecret('Acme', 'ada@example.com')
  assert.equal(e.secret.length, 32)
  assert.equal(e.manual, e.secret)
  assert.equal(e.uri, `otpauth://totp/Acme:ada%40example.com?secret=${e.secret}&issuer=Acme&algorithm=SHA1&digits=6&period=30`)
  assert.match(e.qrCode, /^data:image\/png;base64,/)
  assert.equal(rampart.keyUri('Acme', 'ada@example.com', e.secret), e.uri)
})

test('codes computed by otplib are accepted, within the window only', () => {
  for (let i = 0; i < 50; i++) {
    const { secret } = rampart.newSecret('Acme', 'a')
    const at = START + i * 7919
    assert.equal(rampart.codeAt(secret, at), code(secret, at))
    assert.equal(rampart.verify(secret, code(secret, at), { unixTime: at }), true)
    assert.equal(rampart.verify(secret, code(secret, at - 30), { unixTime: at }), true)
    assert.equal(rampart.verify(secret, code(secret, at + 30), { unixTime: at }), true)
    assert.equal(rampart.verify(secret, code(secret, at - 30), { unixTime: at, window: 0 }), code(secret, at - 30) === code(secret, at))
    const far = code(secret, at + 90)
    if (![-30, 0, 30].some((d) => code(secret, at + d) === far)) {
      assert.equal(rampart.verify(secret, far, { unixTime: at }), false)
    }
  }
  // otplib's own helper agrees with ours at the current time.
  const { secret } = rampart.newSecret('Acme', 'a')
  assert.equal(rampart.verify(secret, authenticator.generate(secret)), true)
  assert.equal(rampart.hotp(secret, 7), otplibHotp.clone({ encoding: 'hex' }).generate(authenticator.decode(secret), 7))
})

test('wrong and malformed codes are false, not errors', () => {
  const { secret } = rampart.newSecret('Acme', 'a')
  for (const token of ['abcdef', '12345', 12.5, true, null, {}, [], '']) {
    assert.equal(rampart.verify(secret, token, { unixTime: START }), false)
  }
  assert.equal(rampart.verifyStep(secret, 'junk'), null)
})

test('bad arguments throw clear errors', () => {
  assert.throws(() => rampart.verify('JBSWY3DPEHPK3PXP', '123456', { window: 3 }), (err) => {
    assert.equal(err.code, 400)
    assert.equal(err.kind, 'invalid_input')
    assert.match(err.message, /window/)
    return true
  })
  assert.throws(() => rampart.codeAt('not base32 !!!'), (err) => err.code === 400 && typeof err.kind === 'string')
  assert.throws(() => rampart.codeAt(42), /string|Buffer|expect/i)
  assert.throws(() => rampart.codeAt('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', -5), /unixTime/)
})

test('errors are Error objects with code, kind and message', async () => {
  const clock = new rampart.ManualClock(START)
  const service = new rampart.Service(null, {}, clock)
  const p = (await service.createPartner('Acme')).partnerId
  await rejects(service.status2fa(p, 'not-a-uuid'), 400, 'contact_id_invalid', 'contactId must be a UUID')
  await rejects(service.status2fa(p, ''), 400, 'contact_id_required', 'contactId is required')
  await rejects(service.create2fa(p, require('node:crypto').randomUUID(), 'a:b'), 400, 'issuer_invalid', "twoFactorIssuer must be 1 to 64 characters without ':' or control characters")
  await assert.rejects(service.partner('nope'), (err) => err instanceof Error && err.code === 400)
  await assert.rejects(service.authenticate('sk_wrong'), (err) => err.code === 401 && err.kind === 'unauthorized')
  assert.throws(() => new rampart.Service(null, { environment: 'staging' }), (err) => err instanceof Error && err.code === 400 && err.kind === 'invalid_input')
  assert.throws(() => new rampart.Service(null, { environment: 'production' }), (err) => err.kind === 'config')
  assert.throws(() => new rampart.Service(null, { masterKey: Buffer.alloc(5) }), (err) => err.message === 'master key must be exactly 32 bytes')
  const prod = new rampart.Service(null, { environment: 'production', masterKey: Buffer.alloc(32, 7), serviceName: 'Shop', window: 2 })
  assert.deepEqual([prod.environment, prod.serviceName, prod.window, prod.path], ['production', 'Shop', 2, null])
  await prod.ping()
  // Keys: create, authenticate (bare and as a header), rotate.
  const creds = await service.createPartner('Keys')
  assert.match(creds.secretKey, /^sk_/)
  assert.deepEqual(await service.authenticate(`Bearer ${creds.secretKey}`), { partnerId: creds.partnerId, method: 'secretKey' })
  const rotated = await service.rotateKeys(creds.partnerId, 'ops')
  assert.notEqual(rotated.secretKey, creds.secretKey)
  assert.equal(await service.partnerCount(), 2)
  assert.equal(await service.setWidgetText(p, 'Buy'), 'Buy')
  assert.equal(await service.widgetText(p), 'Buy')
})
