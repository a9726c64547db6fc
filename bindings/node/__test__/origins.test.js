// Who may embed the widget (SPEC section 6.2) through the binding: a partner's embedding origins
// (canonical, at most 20, https only in production, errors naming the index), the operator's
// approval of a production widget (on the partner, audit-logged), and the synchronous helpers
// checkOrigins, frameAncestors and originAllowed.
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')

const { rampart, START, setup, rejects, throws } = require('./helpers')

const LOCAL = 'http://localhost:* http://127.0.0.1:*'
const PARTNER_NOT_FOUND = ['partner_not_found', 404, 'Partner not found']

function invalid(message) {
  return ['invalid_input', 400, message]
}

test('origins round trip, canonical', async () => {
  const { service, partner } = await setup()
  assert.deepEqual(await service.widgetOrigins(partner), [])
  assert.deepEqual((await service.partner(partner)).widgetOrigins, [])
  const stored = await service.setWidgetOrigins(partner, ['HTTPS://Shop.Example:443', 'http://localhost:3000/'])
  assert.deepEqual(stored, ['https://shop.example', 'http://localhost:3000'])
  assert.deepEqual(await service.widgetOrigins(partner), ['https://shop.example', 'http://localhost:3000'])
  assert.deepEqual((await service.partner(partner)).widgetOrigins, ['https://shop.example', 'http://localhost:3000'])
  assert.deepEqual(await service.setWidgetOrigins(partner, ['https://bücher.example']), ['https://xn--bcher-kva.example'])
  assert.deepEqual(await service.setWidgetOrigins(partner, []), [])
  assert.deepEqual(await service.widgetOrigins(partner), [])
})

test('production takes only https; the error names the index', async () => {
  const { service } = await setup()
  const live = (await service.createPartner('Live', 'production')).partnerId
  assert.deepEqual(await service.setWidgetOrigins(live, ['https://shop.example']), ['https://shop.example'])
  await rejects(
    service.setWidgetOrigins(live, ['https://a.example', 'http://b.example']),
    ...invalid('widgetOrigins[1] must be https in production'),
  )
  await rejects(service.setWidgetOrigins(live, ['http://localhost:3000']), ...invalid('widgetOrigins[0] must be https in production'))
  assert.deepEqual(await service.widgetOrigins(live), ['https://shop.example'])
})

test('at most 20 origins, none twice, nothing but origins', async () => {
  const { service, partner } = await setup()
  const twenty = Array.from({ length: 20 }, (_, i) => `https://s${i}.example`)
  assert.deepEqual(await service.setWidgetOrigins(partner, twenty), twenty)
  await rejects(
    service.setWidgetOrigins(partner, [...twenty, 'https://s20.example']),
    ...invalid('widgetOrigins may list at most 20 origins'),
  )
  // the length is the answer before any item's, as for valid text
  await rejects(service.setWidgetOrigins(partner, [...twenty, 7]), ...invalid('widgetOrigins may list at most 20 origins'))
  await rejects(
    service.setWidgetOrigins(partner, ['https://a.example', 'HTTPS://A.example:443']),
    ...invalid('widgetOrigins[1] is the same origin as widgetOrigins[0]'),
  )
  await rejects(
    service.setWidgetOrigins(partner, ['https://*.example']),
    ...invalid('widgetOrigins[0] must not hold a wildcard: register each origin'),
  )
  await rejects(
    service.setWidgetOrigins(partner, ['https://a.example/path']),
    ...invalid('widgetOrigins[0] must be an origin: http(s)://host[:port], without path, query or credentials'),
  )
  await rejects(service.setWidgetOrigins(partner, 'https://a.example'), ...invalid('origins must be an array of strings'))
  await rejects(service.setWidgetOrigins(partner), ...invalid('origins is required'))
  await rejects(service.setWidgetOrigins(partner, ['https://a.example', 7]), ...invalid('widgetOrigins[1] must be a string'))
  await rejects(service.setWidgetOrigins(partner, [null]), ...invalid('widgetOrigins[0] must be a string'))
  assert.deepEqual(await service.widgetOrigins(partner), twenty)
})

test('an unknown partner is partner_not_found', async () => {
  const { service, partner } = await setup()
  const nobody = crypto.randomUUID()
  await rejects(service.setWidgetOrigins(nobody, ['https://a.example']), ...PARTNER_NOT_FOUND)
  await rejects(service.widgetOrigins(nobody), ...PARTNER_NOT_FOUND)
  await rejects(service.setWidgetApproval(nobody, true, 'ops'), ...PARTNER_NOT_FOUND)
  await rejects(service.auditEvents(nobody), ...PARTNER_NOT_FOUND)
  // Only the setup's partner exists, and nothing was recorded for it.
  assert.deepEqual(await service.verifyAudit(), [{ partnerId: partner, rows: 0, firstBadSeq: null }])
})

test('the approval shows on the partner and is audit-logged', async () => {
  const { service, partner } = await setup()
  assert.equal((await service.partner(partner)).widgetApproved, false)
  assert.equal(await service.setWidgetApproval(partner, true, 'ops@example.com'), undefined)
  const p = await service.partner(partner)
  assert.equal(p.widgetApproved, true)
  assert.equal(p.twoFactorWaived, false)
  await service.setWidgetApproval(partner, false, 'ops@example.com')
  assert.equal((await service.partner(partner)).widgetApproved, false)
  const at = '2023-11-14T22:13:20.000Z' // START, 1_700_000_000
  assert.equal(new Date(at).getTime(), START * 1000)
  const { events } = await service.auditEvents(partner)
  assert.deepEqual(
    events.map((r) => [r.seq, r.actor, r.event, r.partnerId, r.contactId, r.at, r.details]),
    [
      [1, 'operator:ops@example.com', 'widget.approved', partner, null, at, {}],
      [2, 'operator:ops@example.com', 'widget.unapproved', partner, null, at, {}],
    ],
  )
  await rejects(service.setWidgetApproval(partner, 'yes', 'ops'), ...invalid('approved must be a boolean'))
  await rejects(service.setWidgetApproval(partner, true, '\ud800'), ...invalid('operator must be valid Unicode text'))
  assert.equal((await service.auditEvents(partner)).events.length, 2)
})

test('checkOrigins', () => {
  assert.deepEqual(rampart.checkOrigins(['HTTPS://Shop.Example:443', 'http://localhost:3000'], 'sandbox'), [
    'https://shop.example',
    'http://localhost:3000',
  ])
  assert.deepEqual(rampart.checkOrigins([], 'production'), [])
  throws(() => rampart.checkOrigins(['https://a.example', 'http://b.example'], 'production'), ...invalid('widgetOrigins[1] must be https in production'))
  const many = Array.from({ length: 21 }, (_, i) => `https://s${i}.example`)
  throws(() => rampart.checkOrigins(many, 'sandbox'), ...invalid('widgetOrigins may list at most 20 origins'))
  throws(() => rampart.checkOrigins([], 'staging'), ...invalid('environment must be sandbox or production'))
  throws(() => rampart.checkOrigins({ 0: 'https://a.example', length: 1 }, 'sandbox'), ...invalid('origins must be an array of strings'))
})

test('frameAncestors for both environments', () => {
  const origins = ['https://a.example', 'HTTPS://B.example:8443']
  assert.equal(rampart.frameAncestors(origins, 'production'), 'frame-ancestors https://a.example https://b.example:8443')
  assert.equal(rampart.frameAncestors(origins, 'sandbox'), `frame-ancestors https://a.example https://b.example:8443 ${LOCAL}`)
  assert.equal(rampart.frameAncestors([], 'sandbox'), `frame-ancestors ${LOCAL}`)
  assert.equal(rampart.frameAncestors([], 'production'), "frame-ancestors 'none'")
  // nothing but origins reaches the header
  throws(
    () => rampart.frameAncestors(['https://a.example; script-src *'], 'sandbox'),
    ...invalid('widgetOrigins[0] must be an origin: http(s)://host[:port], without path, query or credentials'),
  )
})

test('originAllowed', () => {
  const registered = ['HTTPS://Shop.Example:443']
  assert.equal(rampart.originAllowed('https://shop.example', registered, 'production'), true)
  assert.equal(rampart.originAllowed('https://shop.example:444', registered, 'production'), false)
  assert.equal(rampart.originAllowed('http://localhost:5173', registered, 'sandbox'), true)
  assert.equal(rampart.originAllowed('http://localhost:5173', registered, 'production'), false)
  assert.equal(rampart.originAllowed('http://localhost.evil.example', [], 'sandbox'), false)
  assert.equal(rampart.originAllowed('null', [], 'sandbox'), false)
  throws(
    () => rampart.originAllowed('http://a.example', ['http://a.example'], 'production'),
    ...invalid('widgetOrigins[0] must be https in production'),
  )
  throws(() => rampart.originAllowed('https://a.example', null, 'sandbox'), ...invalid('registered is required'))
  throws(() => rampart.originAllowed(7, [], 'sandbox'), ...invalid('origin must be a string'))
})

test('a lone surrogate in an origin is that item\'s 400, never U+FFFD', async () => {
  const { service, partner } = await setup()
  for (const bad of ['\ud800', 'https://b\ud800.example', 'https://b.example\udfff']) {
    const origins = ['https://a.example', bad]
    const message = invalid('widgetOrigins[1] must be valid Unicode text')
    await rejects(service.setWidgetOrigins(partner, origins), ...message)
    throws(() => rampart.checkOrigins(origins, 'sandbox'), ...message)
    throws(() => rampart.frameAncestors(origins, 'production'), ...message)
    throws(() => rampart.originAllowed('https://a.example', origins, 'sandbox'), ...message)
    throws(() => rampart.originAllowed(bad, [], 'sandbox'), ...invalid('origin must be valid Unicode text'))
  }
  assert.deepEqual(await service.widgetOrigins(partner), [])
})

test('storage calls return Promises; the helpers are synchronous', async () => {
  const { service, partner } = await setup()
  const pending = service.setWidgetOrigins(partner, ['https://a.example'])
  assert.ok(pending instanceof Promise)
  assert.ok(service.widgetOrigins(partner) instanceof Promise)
  assert.ok(service.setWidgetApproval(partner, true, 'ops') instanceof Promise)
  await pending
  assert.ok(Array.isArray(rampart.checkOrigins([], 'sandbox')))
})
