// The error class (SPEC section 5): every error the binding throws or rejects with is a
// RampartError whose `code` is the stable name, `status` the HTTP-style number and `message`
// the fixed text. Also: unknown partners, the master key file's checks, and widget options
// that take their environment from the publishable key.
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { rampart, START, code, setup, enabled, rejects, throws } = require('./helpers')

function tempDir(ctx) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rampart-node-'))
  ctx.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('RampartError is an exported Error subclass with code, status and message', async () => {
  assert.equal(typeof rampart.RampartError, 'function')
  assert.ok(rampart.RampartError.prototype instanceof Error)
  const { service, partner, contact } = await setup()
  let caught
  await service.enable2fa(partner, contact, '123456').catch((e) => {
    caught = e
  })
  assert.ok(caught instanceof rampart.RampartError)
  assert.ok(caught instanceof Error)
  assert.equal(caught.name, 'RampartError')
  assert.equal(caught.code, 'not_created')
  assert.equal(caught.status, 409)
  assert.equal(caught.message, 'Must create 2FA before enabling it')
  assert.equal(caught.kind, 'not_created')
  assert.equal(caught.retryAfter, undefined)
  assert.equal(String(caught), 'RampartError: Must create 2FA before enabling it')
  assert.deepEqual(Object.keys(caught), ['code', 'status'])
  // Thrown synchronously: the stack starts at the caller.
  try {
    rampart.codeAt('JBSWY3DPEHPK3PXP', 1e20)
    assert.fail('codeAt must throw')
  } catch (e) {
    assert.ok(e instanceof rampart.RampartError)
    assert.match(e.stack, /^RampartError: unixTime must be a whole number of seconds from 0 to 9007199254740991\n\s+at /)
  }
})

test('a caller can build a RampartError too (for tests and wrappers)', () => {
  const e = new rampart.RampartError('Google 2FA failed', { code: 'token_failed', status: 401 })
  assert.deepEqual([e instanceof Error, e.code, e.status, e.message, e.kind], [true, 'token_failed', 401, 'Google 2FA failed', 'token_failed'])
  const t = new rampart.RampartError('Too many failed 2FA attempts, try again in 30 seconds', { code: 'throttled', status: 429, retryAfter: 30 })
  assert.equal(t.retryAfter, 30)
})

test('RampartError is a named ESM export, the same class', async () => {
  const { RampartError, Service } = await import('rampart')
  assert.equal(RampartError, rampart.RampartError)
  assert.equal(Service, rampart.Service)
})

test('errors of every surface are RampartErrors: getters, constructors, widget, closed service', async () => {
  const s = new rampart.Service()
  s.close()
  throws(() => s.environment, 'config', 500, 'the service is closed')
  await rejects(s.ping(), 'config', 500, 'the service is closed')
  throws(() => new rampart.ManualClock(-1), 'invalid_input', 400, 'now must be a whole number of seconds from 0 to 9007199254740991')
  throws(() => rampart.buildUrl({}), 'options_invalid', 400, 'The widget options have errors (environment: environment is required: "sandbox" or "production".).')
  throws(() => rampart.validate({}, { target: 'page' }), 'target_invalid', 400, 'target must be "url" or "script".')
  throws(() => rampart.validateAddress('dogecoin', 'D8'), 'chain_unknown', 400, 'chain must be bitcoin, litecoin, ethereum or solana.')
})

test('errors in a worker thread are that thread\'s RampartErrors', async () => {
  const { Worker } = require('node:worker_threads')
  const source = `
    const { parentPort } = require('node:worker_threads')
    const rampart = require(${JSON.stringify(path.resolve(__dirname, '..'))})
    try { rampart.hotp('JBSWY3DPEHPK3PXP', -1) } catch (e) {
      parentPort.postMessage([e instanceof rampart.RampartError, e.code, e.status, e.message])
    }`
  const got = await new Promise((resolve, reject) => {
    const w = new Worker(source, { eval: true })
    w.once('message', resolve)
    w.once('error', reject)
  })
  assert.deepEqual(got, [true, 'invalid_input', 400, 'counter must be a whole number from 0 to 9007199254740991'])
})

test('throttled carries retryAfter', async () => {
  const t = await setup()
  const manual = await enabled(t)
  const right = code(manual, t.clock.now)
  const wrong = right === '000000' ? '000001' : '000000'
  for (let i = 0; i < 5; i++) assert.equal(await t.service.verify2fa(t.partner, t.contact, wrong), false)
  await assert.rejects(t.service.verify2fa(t.partner, t.contact, right), (err) => {
    assert.ok(err instanceof rampart.RampartError)
    assert.deepEqual([err.code, err.status, err.retryAfter], ['throttled', 429, 30])
    assert.deepEqual(Object.keys(err), ['code', 'status', 'retryAfter'])
    return true
  })
})

test('an unknown partner is 404 partner_not_found, and no contact is created', async () => {
  const { service } = await setup()
  const ghost = crypto.randomUUID()
  const contact = crypto.randomUUID()
  await rejects(service.create2fa(ghost, contact), 'partner_not_found', 404, 'Partner not found')
  await rejects(service.status2fa(ghost, contact), 'partner_not_found', 404, 'Partner not found')
  await rejects(service.enable2fa(ghost, contact, '123456'), 'partner_not_found', 404, 'Partner not found')
  await rejects(service.disable2fa(ghost, contact, '123456'), 'partner_not_found', 404, 'Partner not found')
  await rejects(service.verify2fa(ghost, contact, '123456'), 'partner_not_found', 404, 'Partner not found')
  await rejects(service.partner(ghost), 'partner_not_found', 404, 'Partner not found')
  assert.equal(await service.partnerCount(), 1)
})

test('a master key file that others can read is refused, naming the file and its mode', async (ctx) => {
  const db = path.join(tempDir(ctx), 'r.db')
  const keyFile = `${db}.key`
  const a = new rampart.Service(db)
  await a.createPartner('Acme')
  a.close()
  assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600)
  fs.chmodSync(keyFile, 0o644)
  throws(
    () => new rampart.Service(db),
    'config',
    500,
    `master key file ${keyFile}: has mode 0644; it must be readable by its owner only (chmod 600 ${keyFile})`,
  )
  fs.chmodSync(keyFile, 0o600)
  new rampart.Service(db).close()
})

test('a database holding secrets whose key file is gone is refused, and no new key is written', async (ctx) => {
  const db = path.join(tempDir(ctx), 'r.db')
  const keyFile = `${db}.key`
  const clock = new rampart.ManualClock(START)
  const a = new rampart.Service(db, null, clock)
  const partner = (await a.createPartner('Acme')).partnerId
  await enabled({ service: a, partner, contact: crypto.randomUUID(), clock })
  a.close()
  fs.rmSync(keyFile)
  throws(
    () => new rampart.Service(db, null, clock),
    'config',
    500,
    `master key file ${keyFile} is missing, but the database holds 2FA secrets sealed under it: ` +
      'restore the file (a new key would lock out every contact with 2FA)',
  )
  assert.equal(fs.existsSync(keyFile), false)
})

test('a key file with a key id twice, or whose key opens none of the secrets, is refused', async (ctx) => {
  const db = path.join(tempDir(ctx), 'r.db')
  const keyFile = `${db}.key`
  const clock = new rampart.ManualClock(START)
  const a = new rampart.Service(db, null, clock)
  const partner = (await a.createPartner('Acme')).partnerId
  await enabled({ service: a, partner, contact: crypto.randomUUID(), clock })
  a.close()
  const original = fs.readFileSync(keyFile, 'utf8')
  fs.writeFileSync(keyFile, `${original.trim()}\n1:${'ab'.repeat(32)}\n`)
  throws(() => new rampart.Service(db, null, clock), 'config', 500, `master key file ${keyFile}: line 2: key id 1 is given twice (first on line 1)`)
  fs.writeFileSync(keyFile, `1:${'ab'.repeat(32)}\n`)
  throws(() => new rampart.Service(db, null, clock), 'config', 500, `master key file ${keyFile} line 1: key id 1 opens none of the stored 2FA secrets sealed under it`)
  fs.writeFileSync(keyFile, original)
  new rampart.Service(db, null, clock).close()
})

test('widget options without environment take it from the publishable key', () => {
  const sandbox = { publicKey: 'pk_sandbox_0123456789abcdef' }
  assert.equal(rampart.buildUrl(sandbox), 'https://widget-sandbox.rampart.network/?publicKey=pk_sandbox_0123456789abcdef')
  assert.equal(rampart.validate(sandbox).environment, 'sandbox')
  const production = { publicKey: 'pk_production_0123456789abcdef' }
  assert.equal(rampart.buildUrl(production), 'https://widget.rampart.network/?publicKey=pk_production_0123456789abcdef')
  assert.match(rampart.scriptSnippet({ ...sandbox, targetContainerId: 'w' }), /Rampart\.render\(\{"environment":"sandbox","publicKey":"pk_sandbox_0123456789abcdef"/)
  // A key that contradicts the given environment stays an error.
  const contradiction = rampart.validate({ environment: 'production', ...sandbox })
  assert.deepEqual(contradiction.errors.map((i) => [i.code, i.path]), [['public_key_environment', 'publicKey']])
  throws(
    () => rampart.buildUrl({ environment: 'production', ...sandbox }),
    'options_invalid',
    400,
    'The widget options have errors (publicKey: publicKey belongs to the other environment.).',
  )
})
