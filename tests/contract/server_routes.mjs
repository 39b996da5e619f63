// The (method, path template) pairs this server serves, read from the
// server's own route table and dashboard files by the print_routes tool
// (src/server/print_routes.cc, path in LEASEHOLD_PRINT_ROUTES). The tests
// check that each one is in docs/openapi.yaml and is really served, so an
// endpoint added to the table but not to the document fails them.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const tool = process.env.LEASEHOLD_PRINT_ROUTES;
assert.ok(tool && existsSync(tool), "set LEASEHOLD_PRINT_ROUTES to the print_routes tool");

export const serverRoutes = JSON.parse(execFileSync(tool, { encoding: "utf8" }));
