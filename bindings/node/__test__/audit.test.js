// The audit trail (SPEC section 9.1) and metrics (9.2) through the binding: exact rows in order,
// every hash recomputed here (node:crypto over the canonical JSON), paging with `after` and
// `next`, the contact filter, argument errors, the chain reports, and each service's own metrics.
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { rampart, START, code, setup, rejects, GENESIS, auditHash, assertChain } = require('./helpers')

const AT = '2023-11-14T22:13:20.000Z' // START, 1_700_000_000
const OPS = 'operator:ops@example.com'
const LIMIT = ['invalid_input', 400, 'limit must be an integer from 1 to 500']
const AFTER = ['invalid_input', 400, 'after must be an integer from 0 to 9007199254740991']
const PARTNER_NOT_FOUND = ['partner_not_found', 404, 'Partner not found']
const CONTACT_INVALID = ['contact_id_invalid', 400, 'contactId must be a UUID']

// Seven rows: the partner's create and enable for contact a (enable writes two: 2FA on and the
// recovery codes issued), an operator's KYC mark for b, the widget approval (no contact), the
// unlock of a (one failure before it), and a's disable 30 s later.
async function history() {
  const t = await setup()
  const { service, partner, clock } = t
  const a = crypto.randomUUID()
  const b = crypto.randomUUID()
  const s = await service.create2fa(partner, a)
  await service.enable2fa(partner, a, code(s.manual, clock.now))
  await service.setKycPassed(partner, b, true, 'ops@example.com')
  await service.setWidgetApproval(partner, true, 'ops@example.com')
  assert.equal(await service.verify2fa(partner, a, 'junk'), false)
  await service.resetLock(partner, a, 'ops@example.com')
  clock.advance(30)
  await service.disable2fa(partner, a, code(s.manual, clock.now))
  return { ...t, a, b }
}

test('rows in order, each hash recomputed, each prev the hash before', async () => {
  const { service, partner, a, b } = await history()
  const page = await service.auditEvents(partner)
  assert.equal(page.next, null)
  const rows = page.events
  assert.deepEqual(
    rows.map((r) => [r.seq, r.contactId, r.actor, r.event, r.details, r.at]),
    [
      [1, a, 'partner', '2fa.created', {}, AT],
      [2, a, 'partner', '2fa.enabled', {}, AT],
      [3, a, 'partner', 'recovery_codes.issued', { reason: 'enable' }, AT],
      [4, b, OPS, 'kyc.marked', {}, AT],
      [5, null, OPS, 'widget.approved', {}, AT],
      [6, a, OPS, '2fa.unlocked', { failures: 1 }, AT],
      [7, a, 'partner', '2fa.disabled', { method: 'token' }, '2023-11-14T22:13:50.000Z'],
    ],
  )
  for (const r of rows) {
    // exactly the core's members, in its order, and nothing else
    assert.deepEqual(Object.keys(r), ['seq', 'id', 'at', 'partnerId', 'contactId', 'actor', 'event', 'details', 'prev', 'hash'])
    assert.equal(r.partnerId, partner)
    assert.match(r.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    assert.match(r.hash, /^[0-9a-f]{64}$/)
    assert.equal(Object.getPrototypeOf(r.details), Object.prototype) // a plain object
    assert.equal(r.hash, auditHash(r))
  }
  assert.equal(new Set(rows.map((r) => r.id)).size, 7)
  assert.equal(rows[0].prev, GENESIS)
  assertChain(rows)
  // the recomputation really covers every member: change one and the hash no longer matches
  for (const [key, value] of [['seq', 7], ['actor', 'partner'], ['details', { failures: 2 }], ['contactId', b], ['prev', GENESIS]]) {
    assert.notEqual(auditHash({ ...rows[5], [key]: value }), rows[5].hash, key)
  }
})

test('paging with after and next', async () => {
  const { service, partner } = await history()
  const everything = (await service.auditEvents(partner, null, 0, 500)).events
  const seen = []
  const pages = []
  let after = 0
  for (;;) {
    const page = await service.auditEvents(partner, null, after, 2)
    pages.push([page.events.map((r) => r.seq), page.next])
    seen.push(...page.events)
    if (page.next === null) break
    after = page.next
  }
  assert.deepEqual(pages, [[[1, 2], 2], [[3, 4], 4], [[5, 6], 6], [[7], null]])
  assert.deepEqual(seen, everything)
  assert.deepEqual((await service.auditEvents(partner, undefined, 4)).events.map((r) => r.seq), [5, 6, 7])
  assert.deepEqual(await service.auditEvents(partner, null, 7), { events: [], next: null })
  assert.deepEqual(await service.auditEvents(partner, null, Number.MAX_SAFE_INTEGER), { events: [], next: null })
  const last = await service.auditEvents(partner, null, 6, 1)
  assert.deepEqual([last.events.map((r) => r.seq), last.next], [[7], null]) // exactly the last row: no next
  assert.deepEqual(await service.auditEvents(partner, null, null, null), await service.auditEvents(partner))
})

test('the contact filter', async () => {
  const { service, partner, a, b } = await history()
  let page = await service.auditEvents(partner, a, 0, 3)
  assert.deepEqual([page.events.map((r) => r.seq), page.next], [[1, 2, 3], 3])
  page = await service.auditEvents(partner, a.toUpperCase(), page.next, 3) // any case is the same contact
  assert.deepEqual([page.events.map((r) => r.seq), page.next], [[6, 7], null])
  const onlyB = (await service.auditEvents(partner, b)).events
  assert.deepEqual(onlyB.map((r) => [r.seq, r.event, r.contactId]), [[4, 'kyc.marked', b]])
  assert.deepEqual(onlyB[0], (await service.auditEvents(partner)).events[3])
  assert.deepEqual(await service.auditEvents(partner, crypto.randomUUID()), { events: [], next: null })
  const other = (await service.createPartner('Other')).partnerId
  assert.deepEqual(await service.auditEvents(other), { events: [], next: null })
  assert.deepEqual(await service.auditEvents(other, a), { events: [], next: null })
})

test('limit and after out of range reject with 400 naming them', async () => {
  const { service, partner } = await history()
  for (const limit of [0, 501, -1, 1.5, NaN, Infinity, '10', true, 2 ** 53]) {
    await rejects(service.auditEvents(partner, null, 0, limit), ...LIMIT)
  }
  for (const after of [-1, 0.5, NaN, '1', false, 2 ** 53]) {
    await rejects(service.auditEvents(partner, null, after, 10), ...AFTER)
  }
  assert.equal((await service.auditEvents(partner, null, 0, 1)).events.length, 1)
  assert.equal((await service.auditEvents(partner, null, 0, 500)).events.length, 7)
  assert.equal((await service.auditEvents(partner)).events.length, 7) // default 100
})

test('bad ids and an unknown partner', async () => {
  const { service, partner } = await setup()
  const nobody = crypto.randomUUID()
  await rejects(service.auditEvents(nobody), ...PARTNER_NOT_FOUND)
  await rejects(service.verifyAudit(nobody), ...PARTNER_NOT_FOUND)
  for (const contact of ['', 'nope', '\ud800', '6f1c2a4e93b14c558f1e0b9b6a0d2c11']) {
    await rejects(service.auditEvents(partner, contact), ...CONTACT_INVALID)
  }
  await rejects(service.auditEvents('acme'), 'invalid_input', 400, 'partnerId must be a UUID')
  await rejects(service.verifyAudit('acme'), 'invalid_input', 400, 'partnerId must be a UUID')
  await rejects(service.auditEvents(), 'invalid_input', 400, 'partnerId is required')
  await rejects(service.auditEvents(partner, 7), 'invalid_input', 400, 'contactId must be a string')
  await rejects(service.verifyAudit('\ud800'), 'invalid_input', 400, 'partnerId must be valid Unicode text')
})

test('verifyAudit reports the rows and no bad seq', async () => {
  const { service, partner } = await history()
  const quiet = (await service.createPartner('Quiet')).partnerId
  assert.deepEqual(await service.verifyAudit(partner), [{ partnerId: partner, rows: 7, firstBadSeq: null }])
  const expected = [
    { partnerId: partner, rows: 7, firstBadSeq: null },
    { partnerId: quiet, rows: 0, firstBadSeq: null },
  ].sort((x, y) => (x.partnerId < y.partnerId ? -1 : 1))
  assert.deepEqual(await service.verifyAudit(), expected)
  assert.deepEqual(await service.verifyAudit(null), expected)
})

test('changes through the partner API are recorded, refused ones are not', async () => {
  const { service, partner } = await setup()
  await service.setWidgetText(partner, 'Back to Acme')
  await service.setWidgetButtonUrl(partner, 'https://acme.example/done')
  await service.setWidgetOrigins(partner, ['https://acme.example'])
  await service.set2faWaiver(partner, true, 'ops')
  await service.set2faWaiver(partner, false, 'ops')
  await rejects(service.setWidgetText(partner, ''), 'widget_text_invalid', 400, 'widgetText must be 1 to 64 characters without control characters')
  const rows = (await service.auditEvents(partner)).events
  assert.deepEqual(
    rows.map((r) => [r.actor, r.event, r.contactId, r.details]),
    [
      ['partner', 'widget.settings_changed', null, { field: 'widgetText' }],
      ['partner', 'widget.settings_changed', null, { field: 'widgetButtonURL' }],
      ['partner', 'widget.settings_changed', null, { field: 'widgetOrigins' }],
      ['operator:ops', 'partner.waiver_set', null, {}],
      ['operator:ops', 'partner.waiver_cleared', null, {}],
    ],
  )
  assertChain(rows)
})

test('a SQLite file keeps the chain across reopening', async (ctx) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rampart-audit-'))
  ctx.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const db = path.join(dir, 'a.db')
  const clock = new rampart.ManualClock(START)
  const a = new rampart.Service(db, null, clock)
  const partner = (await a.createPartner('Acme')).partnerId
  const contact = crypto.randomUUID()
  const s = await a.create2fa(partner, contact)
  await a.enable2fa(partner, contact, code(s.manual, clock.now))
  const before = await a.auditEvents(partner)
  a.close()
  const b = new rampart.Service(db, null, clock)
  assert.deepEqual(await b.auditEvents(partner), before)
  assertChain(before.events)
  assert.deepEqual(await b.verifyAudit(partner), [{ partnerId: partner, rows: 3, firstBadSeq: null }])
  b.close()
})

const ENABLED = 'rampart_2fa_attempts_total{operation="enable",factor="token",result="accepted"} 1'

test('metricsText counts this service only', async () => {
  const clock = new rampart.ManualClock(START)
  const a = new rampart.Service(null, null, clock)
  const b = new rampart.Service(null, null, clock)
  const partner = (await a.createPartner('Acme')).partnerId
  const contact = crypto.randomUUID()
  const s = await a.create2fa(partner, contact)
  await a.enable2fa(partner, contact, code(s.manual, clock.now))
  const lines = (await a.metricsText()).split('\n')
  assert.ok(lines.includes(ENABLED), lines.join('\n'))
  assert.ok(lines.includes('rampart_2fa_transitions_total{transition="enabled"} 1'))
  assert.ok(lines.includes('# TYPE rampart_2fa_attempts_total counter'))
  assert.ok(lines.includes('rampart_audit_events{event="2fa.enabled"} 1'))
  const other = await b.metricsText()
  assert.doesNotMatch(other, /rampart_2fa_attempts_total\{/)
  assert.doesNotMatch(other, /rampart_2fa_transitions_total\{/)
  assert.match(other, /^rampart_build_info\{version="/m)
  // a second contact enabled on a: 2 there, still nothing on b
  const second = crypto.randomUUID()
  const t = await a.create2fa(partner, second)
  await a.enable2fa(partner, second, code(t.manual, clock.now))
  assert.ok((await a.metricsText()).split('\n').includes(ENABLED.slice(0, -1) + '2'))
  assert.doesNotMatch(await b.metricsText(), /operation="enable"/)
  a.close()
  await rejects(a.metricsText(), 'config', 500, 'the service is closed')
  await rejects(a.auditEvents(partner), 'config', 500, 'the service is closed')
  await rejects(a.verifyAudit(), 'config', 500, 'the service is closed')
  b.close()
})
