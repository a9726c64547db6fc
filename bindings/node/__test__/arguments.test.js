// Bad arguments: a Service method never throws, it returns a Promise that rejects with a 400
// RampartError naming the field; a synchronous helper throws the same. The value given is
// never echoed (it may be a secret). Numbers are whole numbers in the argument's range, text is
// valid Unicode (a lone surrogate is the field's own 400, never a replacement character).
'use strict'

const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const { test } = require('node:test')

const { rampart, START, rejects, isRampartError, setup } = require('./helpers')

const SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'
const SECONDS = 'must be a whole number of seconds from 0 to 9007199254740991'
// Stand-ins for a value that must not reach a message: a number, an object, an array.
const LEAKY = [987654321, { secret: 'zz-leak-zz' }, ['zz-leak-zz']]

function noEcho(err) {
  assert.doesNotMatch(err.message, /987654321|zz-leak-zz/)
}

// The call returns a Promise (no synchronous throw) that rejects with exactly this error.
async function rejectsWith(call, message, code = 'invalid_input', status = 400) {
  let promise
  assert.doesNotThrow(() => {
    promise = call()
  }, 'a Service method must reject, not throw')
  assert.ok(promise instanceof Promise)
  await assert.rejects(promise, (err) => {
    noEcho(err)
    return true
  })
  await rejects(promise, code, status, message)
}

function throwsWith(call, message, code = 'invalid_input', status = 400) {
  assert.throws(call, (err) => {
    noEcho(err)
    return isRampartError(err, code, status, message)
  })
}

test('every Service method rejects a wrong-typed argument with a message naming it', async () => {
  const { service, partner: p } = await setup()
  const c = crypto.randomUUID()
  // [method, arguments that are right, index of the argument to spoil, its name, its rule]
  const cases = [
    ['createPartner', ['Acme', 'sandbox'], 0, 'name', 'must be a string'],
    ['createPartner', ['Acme', 'sandbox'], 1, 'environment', 'must be a string'],
    ['rotateKeys', [p, 'ops'], 0, 'partnerId', 'must be a string'],
    ['rotateKeys', [p, 'ops'], 1, 'operator', 'must be a string'],
    ['partner', [p], 0, 'partnerId', 'must be a string'],
    ['authenticate', ['sk_x'], 0, 'bearer', 'must be a string'],
    ['setWidgetText', [p, 'Buy'], 0, 'partnerId', 'must be a string'],
    ['setWidgetText', [p, 'Buy'], 1, 'widgetText', 'must be a string'],
    ['widgetText', [p], 0, 'partnerId', 'must be a string'],
    ['setWidgetButtonUrl', [p, 'https://a.example'], 1, 'widgetButtonUrl', 'must be a string'],
    ['widgetButtonUrl', [p], 0, 'partnerId', 'must be a string'],
    ['set2faWaiver', [p, true, 'ops'], 0, 'partnerId', 'must be a string'],
    ['set2faWaiver', [p, true, 'ops'], 1, 'waived', 'must be a boolean'],
    ['set2faWaiver', [p, true, 'ops'], 2, 'operator', 'must be a string'],
    ['setWidgetOrigins', [p, ['https://a.example']], 0, 'partnerId', 'must be a string'],
    ['widgetOrigins', [p], 0, 'partnerId', 'must be a string'],
    ['setWidgetApproval', [p, true, 'ops'], 0, 'partnerId', 'must be a string'],
    ['setWidgetApproval', [p, true, 'ops'], 1, 'approved', 'must be a boolean'],
    ['setWidgetApproval', [p, true, 'ops'], 2, 'operator', 'must be a string'],
    ['create2fa', [p, c, 'Shop', 'alice'], 0, 'partnerId', 'must be a string'],
    ['create2fa', [p, c, 'Shop', 'alice'], 1, 'contactId', 'must be a string'],
    ['create2fa', [p, c, 'Shop', 'alice'], 2, 'issuer', 'must be a string'],
    ['create2fa', [p, c, 'Shop', 'alice'], 3, 'label', 'must be a string'],
    ['enable2fa', [p, c, '123456'], 0, 'partnerId', 'must be a string'],
    ['enable2fa', [p, c, '123456'], 1, 'contactId', 'must be a string'],
    ['disable2fa', [p, c, '123456'], 1, 'contactId', 'must be a string'],
    ['status2fa', [p, c], 0, 'partnerId', 'must be a string'],
    ['status2fa', [p, c], 1, 'contactId', 'must be a string'],
    ['verify2fa', [p, c, '123456'], 1, 'contactId', 'must be a string'],
    ['setKycPassed', [p, c, true, 'ops'], 2, 'passed', 'must be a boolean'],
    ['setKycPassed', [p, c, true, 'ops'], 3, 'operator', 'must be a string'],
    ['resetLock', [p, c, 'ops'], 2, 'operator', 'must be a string'],
    ['is2faRequired', [p, c], 1, 'contactId', 'must be a string'],
    ['mayPurchase', [p, c], 0, 'partnerId', 'must be a string'],
    ['contactsRequiring2fa', [p], 0, 'partnerId', 'must be a string'],
    ['auditEvents', [p, c, 0, 10], 0, 'partnerId', 'must be a string'],
    ['auditEvents', [p, c, 0, 10], 1, 'contactId', 'must be a string'],
    ['auditEvents', [p, c, 0, 10], 3, 'limit', 'must be an integer from 1 to 500'],
    ['verifyAudit', [p], 0, 'partnerId', 'must be a string'],
  ]
  for (const [method, good, at, field, rule] of cases) {
    for (const bad of LEAKY) {
      const args = good.slice()
      args[at] = bad
      await rejectsWith(() => service[method](...args), `${field} ${rule}`)
    }
  }
  // Nothing was written by any of those calls.
  assert.equal(await service.partnerCount(), 1)
  assert.equal(await service.status2fa(p, c), false)
})

test('missing arguments reject with "is required"', async () => {
  const { service, partner: p } = await setup()
  const c = crypto.randomUUID()
  await rejectsWith(() => service.partner(), 'partnerId is required')
  await rejectsWith(() => service.createPartner(), 'name is required')
  await rejectsWith(() => service.authenticate(null), 'bearer is required')
  await rejectsWith(() => service.rotateKeys(p), 'operator is required')
  await rejectsWith(() => service.set2faWaiver(p, undefined, 'ops'), 'waived is required')
  await rejectsWith(() => service.setWidgetApproval(p, undefined, 'ops'), 'approved is required')
  await rejectsWith(() => service.setWidgetOrigins(p), 'origins is required')
  await rejectsWith(() => service.setKycPassed(p, c, null, 'ops'), 'passed is required')
  // contactId keeps the HTTP API's own answers.
  await rejectsWith(() => service.status2fa(p), 'contactId is required', 'contact_id_required')
  await rejectsWith(() => service.status2fa(p, null), 'contactId is required', 'contact_id_required')
  // A token of the wrong type is a wrong code (SPEC section 2), not a bad argument.
  await rejectsWith(() => service.verify2fa(p, c, { code: '123456' }), '2FA is not enabled', 'not_enabled', 409)
})

test('the token argument keeps the token grammar', async () => {
  const { service, partner: p, clock, contact } = await setup({ throttling: false })
  const s = await service.create2fa(p, contact)
  const right = rampart.codeAt(s.manual, clock.now)
  for (const token of [true, 12.5, {}, [right], -1, 1e7]) {
    await rejectsWith(() => service.enable2fa(p, contact, token), 'Google 2FA failed', 'token_failed', 401)
  }
  await service.enable2fa(p, contact, Number(right))
  assert.equal(await service.status2fa(p, contact), true)
})

test('the synchronous helpers throw the same errors', () => {
  throwsWith(() => rampart.newSecret(987654321, 'alice'), 'issuer must be a string')
  throwsWith(() => rampart.newSecret('Shop', { secret: 'zz-leak-zz' }), 'account must be a string')
  throwsWith(() => rampart.newSecret('Shop'), 'account is required')
  throwsWith(() => rampart.codeAt(987654321), 'secret must be a base32 string or a Buffer')
  throwsWith(() => rampart.codeAt(), 'secret is required')
  throwsWith(() => rampart.codeAt(SECRET, '1700000000'), `unixTime ${SECONDS}`)
  throwsWith(() => rampart.codeAt(SECRET, -5), `unixTime ${SECONDS}`)
  throwsWith(() => rampart.hotp(SECRET, -1), 'counter must be a whole number from 0 to 9007199254740991')
  throwsWith(() => rampart.hotp(SECRET, 1.5), 'counter must be a whole number from 0 to 9007199254740991')
  throwsWith(() => rampart.hotp(SECRET), 'counter is required')
  throwsWith(() => rampart.verify(SECRET, '123456', 987654321), 'options must be an object')
  throwsWith(() => rampart.verify(SECRET, '123456', ['zz-leak-zz']), 'options must be an object')
  throwsWith(() => rampart.verify(SECRET, '123456', { window: 3 }), 'window must be 0, 1 or 2')
  throwsWith(() => rampart.verify(SECRET, '123456', { window: '1' }), 'window must be 0, 1 or 2')
  throwsWith(() => rampart.verifyStep(SECRET, '123456', { unixTime: 'now' }), `unixTime ${SECONDS}`)
  throwsWith(() => rampart.keyUri('Shop', 'alice', { secret: 'zz-leak-zz' }), 'secret must be a base32 string or a Buffer')
  throwsWith(() => rampart.qrPngDataUri(987654321), 'text must be a string')
  // A Uint8Array is as good as a Buffer.
  const bytes = new Uint8Array(Buffer.from('12345678901234567890'))
  assert.equal(rampart.hotp(bytes, 0), '755224')
  assert.equal(rampart.verify(bytes, rampart.codeAt(bytes, START), { unixTime: START }), true)
})

test('widget helpers name the bad argument or setting', () => {
  const options = { environment: 'sandbox', publicKey: 'pk_sandbox_0123456789abcdef' }
  throwsWith(() => rampart.validate({ onDone: () => 1 }), 'options must be plain JSON data (no functions, symbols or BigInts)')
  throwsWith(() => rampart.validate(options, 987654321), 'settings must be an object')
  throwsWith(() => rampart.validate(options, { target: 5 }), 'target must be a string')
  throwsWith(() => rampart.validate(options, { defaultEnvironment: true }), 'defaultEnvironment must be a string')
  throwsWith(() => rampart.iframeSnippet(options, { width: -1 }), 'width must be a whole number of pixels from 1 to 4294967295')
  throwsWith(() => rampart.iframeSnippet(options, { lazy: 'yes' }), 'lazy must be a boolean')
  throwsWith(() => rampart.scriptSnippet(options, { nonce: 987654321 }), 'nonce must be a string')
  throwsWith(() => rampart.parseUrl(987654321), 'url must be a string')
  throwsWith(() => rampart.signUrl(options, 987654321), 'secretKey must be a string')
  throwsWith(() => rampart.signUrl(options, 'sk_x', { timestamp: 'now' }), `timestamp ${SECONDS}`)
  throwsWith(() => rampart.verifySignedUrl('https://x.example', { secret: 'zz-leak-zz' }), 'secretKey must be a string')
  throwsWith(() => rampart.verifySignedUrl('https://x.example', 'sk_x', { maxAge: -1 }), `maxAge ${SECONDS}`)
  throwsWith(() => rampart.cspDirectives(987654321), 'environment must be a string')
  throwsWith(() => rampart.validateAddress('bitcoin', 987654321), 'address must be a string')
  throwsWith(() => rampart.validateAddress('bitcoin', 'bc1q', 'yes'), 'allowTestnet must be a boolean')
})

test('the constructors name the bad option', () => {
  throwsWith(() => new rampart.Service(987654321), 'path must be a string')
  throwsWith(() => new rampart.Service(null, 987654321), 'options must be an object')
  throwsWith(() => new rampart.Service(null, { masterKey: 'zz-leak-zz' }), 'masterKey must be a Buffer')
  throwsWith(() => new rampart.Service(null, { jwtSecret: { secret: 'zz-leak-zz' } }), 'jwtSecret must be a Buffer')
  throwsWith(() => new rampart.Service(null, { window: 3 }), 'window must be 0, 1 or 2')
  throwsWith(() => new rampart.Service(null, { throttling: 'off' }), 'throttling must be a boolean')
  throwsWith(() => new rampart.Service(null, { serviceName: 987654321 }), 'serviceName must be a string')
  throwsWith(() => new rampart.Service(null, { pendingTtlSecs: -1 }), 'pendingTtlSecs must be a whole number of seconds from 1 to 4294967295')
  throwsWith(() => new rampart.ManualClock('soon'), `now ${SECONDS}`)
  throwsWith(() => new rampart.ManualClock(START).advance('30'), 'seconds must be a whole number of seconds from 0 to 9007197554740991')
  throwsWith(() => new rampart.Service(null, null, { now: 5 }), 'clock must be a ManualClock')
  throwsWith(() => new rampart.Service(null, null, new rampart.Service()), 'clock must be a ManualClock')
  // A 32-byte Uint8Array is a master key.
  const s = new rampart.Service(null, { environment: 'production', masterKey: new Uint8Array(32) })
  assert.equal(s.environment, 'production')
})
