import assert from "node:assert/strict";
import { test } from "node:test";
import { SseParser } from "../src/index.js";

const stream =
  'retry: 2000\n\nevent: applock.granted\ndata: {"type":"applock.granted","at":"t","fence":7}\n\n: ping\n\r\nevent: x\r\ndata: {"type":"x","at":"u"}\r\n\r\n';

test("events are parsed whatever the chunks", () => {
  for (let size = 1; size <= stream.length; size++) {
    const parser = new SseParser();
    const events = [];
    for (let i = 0; i < stream.length; i += size) events.push(...parser.push(stream.slice(i, i + size)));
    assert.deepEqual(
      events.map((e: any) => [e.type, e.data.at]),
      [
        ["applock.granted", "t"],
        ["x", "u"],
      ],
      `chunks of ${size}`,
    );
    assert.equal(events[0].data.fence, 7);
  }
});
