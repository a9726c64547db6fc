// examples/node/partner_backend.js: create, enable and status over HTTP through the binding.
'use strict'

const { test } = require('node:test')
const path = require('node:path')

test('the example partner backend self-test', async () => {
  await require(path.resolve(__dirname, '..', '..', '..', 'examples', 'node', 'partner_backend.js')).selfTest()
})
