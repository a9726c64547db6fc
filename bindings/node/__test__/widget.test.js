// The widget through the binding: the shared vectors of tests/vectors/widget and addresses.
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const { rampart, loadVectors, VECTORS } = require('./helpers')

function configOf(data, c) {
  const raw = 'config' in c ? c.config : data.config
  return raw ?? undefined
}

function checkIssues(got, want, name) {
  assert.deepEqual(got.map((i) => [i.code, i.path]), want.map((w) => [w.code, w.path]), name)
  got.forEach((issue, k) => {
    for (const field of ['value', 'suggestion']) {
      if (field in want[k]) assert.equal(issue[field] ?? null, want[k][field], `${name} ${field}`)
    }
  })
}

function mode(m) {
  return m.missing == null ? { kind: m.kind } : { kind: m.kind, missing: m.missing }
}

function eachCase(file, fn) {
  const data = loadVectors(file)
  for (const c of data.cases) fn(data, c)
}

// A widget whole-call failure: a RampartError whose code is the reason, status 400.
function throwsKind(fn, code, name) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof rampart.RampartError, name)
    assert.equal(err.code, code, name)
    assert.equal(err.status, 400, name)
    return true
  })
}

test('widget/validate.json', () => {
  eachCase('widget/validate.json', (data, c) => {
    const config = configOf(data, c)
    const v = rampart.validate(c.options, { target: c.target, defaultEnvironment: c.environment ?? undefined, config })
    checkIssues(v.errors, c.errors, c.name)
    checkIssues(v.warnings, c.warnings, c.name)
    assert.deepEqual(mode(v.mode), c.mode, c.name)
    assert.equal(v.valid, c.errors.length === 0, c.name)
    if (c.errors.length === 0) {
      assert.equal(v.url, c.url, c.name)
      // Canonical URLs are fixed points: parse(build(o)) gives the URL form with no warnings.
      const parsed = rampart.parseUrl(v.url, { config })
      assert.deepEqual(parsed.warnings, [], c.name)
      assert.deepEqual(parsed.options, v.urlOptions, c.name)
      assert.equal(parsed.canonical, v.url, c.name)
      if (c.target === 'url') assert.equal(rampart.buildUrl(c.options, { defaultEnvironment: c.environment ?? undefined, config }), c.url, c.name)
    } else {
      assert.equal(v.url ?? null, null, c.name)
      assert.equal(v.options ?? null, null, c.name)
      if (c.target === 'url') throwsKind(() => rampart.buildUrl(c.options, { defaultEnvironment: c.environment ?? undefined, config }), 'options_invalid', c.name)
    }
  })
})

test('widget/build.json', () => {
  eachCase('widget/build.json', (data, c) => {
    const v = rampart.validate(c.options, { target: c.target, defaultEnvironment: c.environment ?? undefined, config: configOf(data, c) })
    assert.deepEqual(v.errors, [], c.name)
    checkIssues(v.warnings, c.warnings ?? [], c.name)
    if (c.mode) assert.deepEqual(mode(v.mode), c.mode, c.name)
    assert.equal(v.url, c.url, c.name)
  })
})

test('widget/parse.json', () => {
  eachCase('widget/parse.json', (data, c) => {
    const config = configOf(data, c)
    if ('error' in c) return throwsKind(() => rampart.parseUrl(c.url, { config }), c.error, c.name)
    const parsed = rampart.parseUrl(c.url, { config })
    assert.equal(parsed.environment, c.environment, c.name)
    assert.deepEqual(parsed.options, c.options, c.name)
    checkIssues(parsed.warnings, c.warnings, c.name)
    const v = rampart.validate(parsed.options, { target: 'url', defaultEnvironment: parsed.environment, config })
    checkIssues(v.errors, c.validation.errors, c.name)
    checkIssues(v.warnings, c.validation.warnings, c.name)
    assert.equal(v.url ?? null, c.canonical, c.name)
    assert.equal(parsed.canonical ?? null, c.canonical, c.name)
  })
})

test('widget/sign.json', () => {
  eachCase('widget/sign.json', (data, c) => {
    const config = configOf(data, c)
    if (c.kind === 'sign') {
      const call = () => rampart.signUrl(c.options, c.secretKey, { timestamp: c.timestamp, config })
      if ('error' in c) return throwsKind(call, c.error, c.name)
      return assert.equal(call(), c.url, c.name)
    }
    const call = () => rampart.verifySignedUrl(c.url, c.secretKey, { maxAge: c.maxAge, now: c.now, config })
    if ('error' in c) return throwsKind(call, c.error, c.name)
    const parsed = call()
    assert.deepEqual([parsed.options, parsed.environment], [c.options, c.environment], c.name)
  })
})

test('widget/snippet.json', () => {
  eachCase('widget/snippet.json', (data, c) => {
    const config = configOf(data, c)
    if (c.kind === 'csp') {
      const d = rampart.cspDirectives(c.environment, { config })
      return assert.deepEqual([d.frameSrc, d.scriptSrc, d.header], [c.frameSrc, c.scriptSrc, c.header], c.name)
    }
    const settings = { target: c.target, defaultEnvironment: c.environment ?? undefined, config }
    if (c.kind === 'script') {
      const call = () => rampart.scriptSnippet(c.options, { ...settings, nonce: c.nonce ?? undefined })
      if ('error' in c) return throwsKind(call, c.error, c.name)
      return assert.equal(call(), c.html, c.name)
    }
    assert.equal(rampart.iframeSnippet(c.options, { ...settings, ...(c.iframe ?? {}) }), c.html, c.name)
  })
})

test('addresses/*.json', () => {
  const dir = path.join(VECTORS, 'addresses')
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    for (const c of loadVectors(`addresses/${file}`).cases) {
      const name = `${file}:${c.address}:${c.allow_testnet}`
      const r = rampart.validateAddress(c.chain, c.address, c.allow_testnet)
      assert.equal(r.valid, c.valid, name)
      if (c.valid) assert.deepEqual([r.network, r.kind, r.error ?? null], [c.network, c.kind, null], name)
      else assert.ok(r.error === c.error && r.message, name)
    }
  }
})

test('options as plain objects, issues and misuse', () => {
  const ok = rampart.validate(
    {
      publicKey: 'pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc',
      tokens: 'btc',
      receiveAddress: { btc: 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx' },
      amount: '50',
      darkTheme: true,
      showRampartLogo: true,
    },
    { defaultEnvironment: 'sandbox' },
  )
  assert.ok(ok.valid && ok.url.includes('darkTheme=true') && ok.url.includes('showRampartLogo=true'))
  assert.deepEqual(mode(ok.mode), { kind: 'oneScreenCheckout' })
  const bad = rampart.validate({ publicKey: 'sk_sandbox_leakedKey123', amount: '4.999', darktheme: true }, { defaultEnvironment: 'sandbox' })
  assert.equal(bad.valid, false)
  assert.deepEqual(bad.errors.map((i) => i.code), ['public_key_secret', 'amount_too_many_decimals'])
  assert.equal(bad.errors[0].value, 'sk_sandbox_…')
  assert.ok(!JSON.stringify(bad).includes('leakedKey'))
  assert.equal(bad.warnings[0].suggestion, 'darkTheme')
  assert.equal(bad.warnings[0].severity, 'warning')
  assert.equal(rampart.validate(['not', 'a', 'dict']).errors[0].code, 'options_not_object')
  throwsKind(() => rampart.validate({}, { target: 'page' }), 'target_invalid')
  throwsKind(() => rampart.validate({}, { config: { productionRoot: 'http://insecure.example' } }), 'config_root_not_https')
  throwsKind(() => rampart.validateAddress('dogecoin', 'D8'), 'chain_unknown')
  const custom = rampart.validate(
    { publicKey: 'pk_production_9Zx4LmQ2wErTy7UiOp3AsDfG', showAcmeLogo: false },
    { defaultEnvironment: 'production', config: { domain: 'example.com', brand: 'Acme' } },
  )
  assert.equal(custom.url, 'https://widget.example.com/?publicKey=pk_production_9Zx4LmQ2wErTy7UiOp3AsDfG&showAcmeLogo=false')
})
