// envelope.ts: acceptMessage takes only a well-formed v1 envelope from the loader's own iframe
// window and the widget's origin, for its instance, with a known type and a rising seq; it
// ignores everything else and never throws. The committed JSON Schema agrees with the source.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { WIDGET_DIR, importSource } from "./helpers.mjs";

const { acceptMessage, envelope, PAGE_MESSAGE_TYPES, ENVELOPE_SOURCE, ENVELOPE_VERSION } = await importSource("envelope");

const ORIGIN = "https://widget.example.com";
const ID = "0123456789abcdef0123456789abcdef";
const frame = { name: "the iframe's window" };

function state(seq = 0) {
  return { frame, origin: ORIGIN, instanceId: ID, seq };
}

function message(fields = {}) {
  return {
    source: frame,
    origin: ORIGIN,
    data: { source: "rampart-widget", version: 1, type: "ready", instanceId: ID, seq: 1, payload: { url: "u" }, ...fields },
  };
}

describe("accepted", () => {
  test("a valid ready", () => {
    const m = message();
    assert.deepEqual(acceptMessage(state(), m), m.data);
  });

  test("every page type", () => {
    for (const type of ["ready", "screen", "resize", "order.created", "order.completed", "order.failed", "close", "error"]) {
      assert.equal(acceptMessage(state(), message({ type }))?.type, type);
    }
  });

  test("seq above the last accepted, with gaps", () => {
    assert.ok(acceptMessage(state(4), message({ seq: 5 })));
    assert.ok(acceptMessage(state(4), message({ seq: 900 })));
  });

  test("extra envelope fields are not copied", () => {
    const accepted = acceptMessage(state(), message({ extra: 1 }));
    assert.deepEqual(Object.keys(accepted).sort(), ["instanceId", "payload", "seq", "source", "type", "version"]);
  });
});

describe("ignored", () => {
  const cases = {
    "wrong origin": { ...message(), origin: "https://evil.example" },
    "origin differing only in scheme": { ...message(), origin: "http://widget.example.com" },
    "origin with a trailing slash": { ...message(), origin: ORIGIN + "/" },
    "another window (same origin)": { ...message(), source: { other: true } },
    "no source window": { ...message(), source: null },
    "wrong instanceId": message({ instanceId: "ffffffffffffffffffffffffffffffff" }),
    "missing instanceId": message({ instanceId: undefined }),
    "version 2": message({ version: 2 }),
    'version "1"': message({ version: "1" }),
    "version 1.5": message({ version: 1.5 }),
    "version missing": message({ version: undefined }),
    "other source": message({ source: "rampart" }),
    "unknown type": message({ type: "order.refunded" }),
    "hello (the loader's own type)": message({ type: "hello" }),
    "type in upper case": message({ type: "READY" }),
    "seq equal to the last": message({ seq: 3 }),
    "seq below the last": message({ seq: 2 }),
    "seq as a string": message({ seq: "4" }),
    "seq fractional": message({ seq: 3.5 }),
    "seq beyond safe integers": message({ seq: 2 ** 53 }),
    "seq NaN": message({ seq: NaN }),
    "seq Infinity": message({ seq: Infinity }),
    "payload missing": message({ payload: undefined }),
    "payload null": message({ payload: null }),
    "payload an array": message({ payload: [1] }),
    "payload a string": message({ payload: "x" }),
  };
  for (const [name, event] of Object.entries(cases)) {
    test(name, () => assert.equal(acceptMessage(state(3), event), null));
  }

  test("after close (no frame), even from a null source", () => {
    const closed = { ...state(), frame: null };
    assert.equal(acceptMessage(closed, { ...message(), source: null }), null);
  });
});

describe("junk never throws", () => {
  const hostile = {};
  Object.defineProperty(hostile, "source", {
    get() {
      throw new Error("boom");
    },
  });
  const huge = { source: "rampart-widget", version: 1, type: "ready", instanceId: ID, seq: 1, payload: {} };
  for (let i = 0; i < 100000; i++) huge["k" + i] = i;
  const junk = {
    null: null,
    undefined: undefined,
    string: "rampart-widget",
    "JSON string of a valid envelope": JSON.stringify(message().data),
    number: 1,
    array: [message().data],
    "empty object": {},
    "object with null prototype": Object.create(null),
    "throwing getter": hostile,
    "deeply nested": JSON.parse("[".repeat(5000) + "]".repeat(5000)),
  };
  for (const [name, data] of Object.entries(junk)) {
    test(name, () => assert.equal(acceptMessage(state(), { source: frame, origin: ORIGIN, data }), null));
  }

  test("a huge object with a valid envelope inside is still just that envelope", () => {
    const accepted = acceptMessage(state(), { source: frame, origin: ORIGIN, data: huge });
    assert.deepEqual(accepted, { source: "rampart-widget", version: 1, type: "ready", instanceId: ID, seq: 1, payload: {} });
  });

  test("events that are not objects", () => {
    for (const event of [{}, { data: null }, { origin: 1, source: frame }]) {
      assert.equal(acceptMessage(state(), event), null);
    }
    const throwing = {};
    Object.defineProperty(throwing, "source", { get: () => { throw new Error("x"); } });
    assert.equal(acceptMessage(state(), throwing), null);
  });
});

test("envelope() builds what the loader posts", () => {
  assert.deepEqual(envelope("hello", ID, 1, {}), {
    source: "rampart-widget",
    version: 1,
    type: "hello",
    instanceId: ID,
    seq: 1,
    payload: {},
  });
});

test("the JSON Schema agrees with envelope.ts", () => {
  const schema = JSON.parse(readFileSync(join(WIDGET_DIR, "schema/envelope.schema.json"), "utf8"));
  assert.deepEqual(schema.required, ["source", "version", "type", "instanceId", "seq", "payload"]);
  assert.equal(schema.additionalProperties, false);
  assert.equal(schema.properties.source.const, ENVELOPE_SOURCE);
  assert.equal(schema.properties.version.const, ENVELOPE_VERSION);
  assert.deepEqual(schema.properties.type.enum, ["hello", ...PAGE_MESSAGE_TYPES]);
  assert.equal(schema.properties.seq.type, "integer");
  assert.equal(schema.properties.seq.minimum, 1);
  assert.equal(schema.properties.payload.type, "object");
  assert.match(ID, new RegExp(schema.properties.instanceId.pattern));
});
